// A client's file name made safe to store: the part after its last slash, plain characters only, never hidden,
// never a device name, at most 100 characters.
import { HTTPException } from 'gust'

/** Names Windows reserves whatever their extension (`nul.txt` is the NUL device there). */
const DEVICE = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i

/**
 * `raw` as a name to store under: `../../etc/passwd` → `passwd`, `my photo (1).jpg` → `my_photo_1_.jpg`. Throws a
 * 400 when nothing usable is left (`..`, `...`, `/`).
 * @example
 * safeName('C:\\Users\\ann\\report 2024.pdf') // 'report_2024.pdf'
 */
export function safeName(raw) {
  const base = raw.split(/[/\\]/).pop() ?? ''
  let name = base
    .normalize('NFKC')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 100)
  if (DEVICE.test(name)) name = `_${name}`
  if (name === '' || /^[._-]*$/.test(name)) throw new HTTPException(400, `"${raw.slice(0, 100)}" has no characters usable in a file name`)
  return name
}
