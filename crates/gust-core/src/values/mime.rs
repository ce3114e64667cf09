//! Content types from file extensions: the common web types, text ones with `charset=utf-8` (a browser that
//! guesses a charset guesses wrong for UTF-8 sources), and `application/octet-stream` for anything else, which
//! browsers download rather than render.

/// The content type of a file named `name` (by its extension, case-insensitive).
pub(crate) fn content_type(name: &str) -> &'static str {
    let Some((_, ext)) = name.rsplit_once('.') else { return OCTET_STREAM };
    let mut lower = [0u8; 16];
    if ext.len() > lower.len() {
        return OCTET_STREAM;
    }
    for (i, b) in ext.bytes().enumerate() {
        lower[i] = b.to_ascii_lowercase();
    }
    match &lower[..ext.len()] {
        b"html" | b"htm" => "text/html; charset=utf-8",
        b"css" => "text/css; charset=utf-8",
        b"js" | b"mjs" | b"cjs" => "text/javascript; charset=utf-8",
        b"json" | b"map" => "application/json; charset=utf-8",
        b"jsonld" => "application/ld+json; charset=utf-8",
        b"webmanifest" => "application/manifest+json; charset=utf-8",
        b"txt" => "text/plain; charset=utf-8",
        b"md" => "text/markdown; charset=utf-8",
        b"csv" => "text/csv; charset=utf-8",
        b"xml" => "application/xml; charset=utf-8",
        b"xhtml" => "application/xhtml+xml; charset=utf-8",
        b"rss" => "application/rss+xml; charset=utf-8",
        b"atom" => "application/atom+xml; charset=utf-8",
        b"svg" => "image/svg+xml; charset=utf-8",
        b"yaml" | b"yml" => "application/yaml; charset=utf-8",
        b"toml" => "application/toml; charset=utf-8",
        b"ics" => "text/calendar; charset=utf-8",
        b"vtt" => "text/vtt; charset=utf-8",
        b"wasm" => "application/wasm",
        b"png" => "image/png",
        b"jpg" | b"jpeg" => "image/jpeg",
        b"gif" => "image/gif",
        b"webp" => "image/webp",
        b"avif" => "image/avif",
        b"ico" => "image/x-icon",
        b"bmp" => "image/bmp",
        b"tif" | b"tiff" => "image/tiff",
        b"woff" => "font/woff",
        b"woff2" => "font/woff2",
        b"ttf" => "font/ttf",
        b"otf" => "font/otf",
        b"mp4" | b"m4v" => "video/mp4",
        b"webm" => "video/webm",
        b"ogv" => "video/ogg",
        b"mov" => "video/quicktime",
        b"mp3" => "audio/mpeg",
        b"m4a" => "audio/mp4",
        b"aac" => "audio/aac",
        b"oga" | b"ogg" | b"opus" => "audio/ogg",
        b"wav" => "audio/wav",
        b"flac" => "audio/flac",
        b"pdf" => "application/pdf",
        b"zip" => "application/zip",
        b"gz" => "application/gzip",
        b"zst" => "application/zstd",
        b"tar" => "application/x-tar",
        b"7z" => "application/x-7z-compressed",
        _ => OCTET_STREAM,
    }
}

/// What a file of unknown type is sent as.
pub(crate) const OCTET_STREAM: &str = "application/octet-stream";

/// Whether a content type is worth compressing: text, and the structured formats that are text underneath.
/// Images, audio, video, fonts other than the old uncompressed ones, and archives are compressed already.
///
/// Asked of every response of a server with compression on: compared without case and without copying.
pub(crate) fn compressible(content_type: &str) -> bool {
    const TYPES: [&str; 10] = [
        "application/json",
        "application/javascript",
        "application/xml",
        "application/wasm",
        "application/yaml",
        "application/toml",
        "image/x-icon",
        "image/bmp",
        "font/ttf",
        "font/otf",
    ];
    let essence = content_type.split(';').next().unwrap_or("").trim().as_bytes();
    let starts = |p: &str| essence.len() >= p.len() && essence[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    let ends =
        |s: &str| essence.len() >= s.len() && essence[essence.len() - s.len()..].eq_ignore_ascii_case(s.as_bytes());
    starts("text/") || ends("+json") || ends("+xml") || TYPES.iter().any(|t| essence.eq_ignore_ascii_case(t.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_extension_with_a_charset_for_text() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("app.4f3a.JS"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("logo.svg"), "image/svg+xml; charset=utf-8");
        assert_eq!(content_type("photo.JPEG"), "image/jpeg");
        assert_eq!(content_type("movie.mp4"), "video/mp4");
        assert_eq!(content_type("font.woff2"), "font/woff2");
        assert_eq!(content_type("README"), OCTET_STREAM);
        assert_eq!(content_type("archive.unknownext"), OCTET_STREAM);
        assert_eq!(content_type("x.averyveryverylongextension"), OCTET_STREAM);
        assert_eq!(content_type(".env"), OCTET_STREAM);
    }

    #[test]
    fn text_and_structured_types_are_compressible_and_media_are_not() {
        for t in [
            "text/html; charset=utf-8",
            "application/json",
            "image/svg+xml",
            "application/ld+json",
            "text/event-stream",
            "application/wasm",
            "Text/HTML",
            " APPLICATION/JSON ; charset=utf-8",
            "application/Problem+JSON",
            "Image/SVG+XML",
            "FONT/TTF",
        ] {
            assert!(compressible(t), "{t}");
        }
        for t in [
            "image/png",
            "video/mp4",
            "font/woff2",
            "application/zip",
            "application/octet-stream",
            "",
            "text",
            "json",
            "application/jsonx",
            "xapplication/json",
        ] {
            assert!(!compressible(t), "{t}");
        }
    }
}
