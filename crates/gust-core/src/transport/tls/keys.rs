//! Certificates and keys from PEM: chains and CA bundles through `rustls-pki-types`, private keys too, and an
//! encrypted PKCS#8 key (`ENCRYPTED PRIVATE KEY`: PBES2 with PBKDF2 or scrypt, AES-CBC, what `openssl pkcs8
//! -topk8` writes) decrypted with its passphrase by RustCrypto's `pkcs8`, since rustls reads no encrypted key.
//! OpenSSL's older encrypted PEM (`Proc-Type: 4,ENCRYPTED` inside an `RSA PRIVATE KEY` or `EC PRIVATE KEY`) is
//! refused with the command that converts it. Every error names the option it is about: `field` for the PEM,
//! `passphrase_field` for the passphrase.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::values::error::Error;

const ENCRYPTED_BEGIN: &[u8] = b"-----BEGIN ENCRYPTED PRIVATE KEY-----";
const ENCRYPTED_END: &[u8] = b"-----END ENCRYPTED PRIVATE KEY-----";

/// The certificates of `pem`, at least one.
pub(super) fn certificates(pem: &[u8], field: &str) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::config(format!("{field}: malformed PEM ({e})")))?;
    if certs.is_empty() {
        return Err(Error::config(format!(
            "{field}: no certificate found (expected PEM: -----BEGIN CERTIFICATE-----)"
        )));
    }
    Ok(certs)
}

/// The private key of `pem`, decrypted with `passphrase` when it is an encrypted PKCS#8 key.
pub(super) fn private_key(
    pem: &[u8],
    passphrase: Option<&str>,
    field: &str,
    passphrase_field: &str,
) -> Result<PrivateKeyDer<'static>, Error> {
    if let Some(block) = section(pem, ENCRYPTED_BEGIN, ENCRYPTED_END) {
        let Some(passphrase) = passphrase else {
            return Err(Error::config(format!(
                "{field}: the private key is encrypted: give its passphrase ({passphrase_field}), or decrypt it \
                 first (`openssl pkey -in key.pem -out key.plain.pem`)"
            )));
        };
        return decrypt(block, passphrase, field, passphrase_field);
    }
    if contains(pem, b"Proc-Type: 4,ENCRYPTED") {
        return Err(Error::config(format!(
            "{field}: the private key is encrypted in OpenSSL's legacy PEM format, which is not read: convert it to \
             encrypted PKCS#8 (`openssl pkcs8 -topk8 -in key.pem -out key.p8.pem`, then give {passphrase_field}) \
             or decrypt it (`openssl pkey -in key.pem -out key.plain.pem`)"
        )));
    }
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => Error::config(format!(
            "{field}: no private key found (expected PEM: -----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY, EC PRIVATE KEY \
             or ENCRYPTED PRIVATE KEY)"
        )),
        e => Error::config(format!("{field}: malformed PEM ({e})")),
    })
}

/// An `ENCRYPTED PRIVATE KEY` block decrypted into a PKCS#8 key. Cost: the key derivation the file asks for
/// (PBKDF2 or scrypt), once at start-up or reload.
fn decrypt(
    block: &[u8],
    passphrase: &str,
    field: &str,
    passphrase_field: &str,
) -> Result<PrivateKeyDer<'static>, Error> {
    let (_, der) = pkcs8::der::pem::decode_vec(block)
        .map_err(|e| Error::config(format!("{field}: malformed encrypted key PEM ({e})")))?;
    let encrypted = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice())
        .map_err(|e| Error::config(format!("{field}: malformed encrypted PKCS#8 key ({e})")))?;
    let plain = encrypted.decrypt(passphrase).map_err(|e| match e {
        // A wrong key shows as bad padding (which pkcs5 reports as `EncryptFailed`), or, one time in 256, as
        // padding that happens to be right over bytes that are no DER.
        pkcs8::Error::EncryptedPrivateKey(pkcs8::pkcs5::Error::DecryptFailed | pkcs8::pkcs5::Error::EncryptFailed)
        | pkcs8::Error::Asn1(_) => {
            Error::config(format!("{passphrase_field}: wrong passphrase for the encrypted private key"))
        }
        pkcs8::Error::EncryptedPrivateKey(pkcs8::pkcs5::Error::UnsupportedAlgorithm { .. }) => Error::config(format!(
            "{field}: the key is encrypted with a scheme that is not read (PBES2 with PBKDF2 or scrypt and AES is: \
             `openssl pkcs8 -topk8 -v2 aes-256-cbc`)"
        )),
        e => Error::config(format!("{field}: the encrypted private key cannot be decrypted ({e})")),
    })?;
    Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(plain.as_bytes().to_vec())))
}

/// The bytes from `begin` to the end of `end`, if `pem` holds such a block.
fn section<'a>(pem: &'a [u8], begin: &[u8], end: &[u8]) -> Option<&'a [u8]> {
    let start = find(pem, begin)?;
    let stop = start + find(&pem[start..], end)? + end.len();
    Some(&pem[start..stop])
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn error(pem: &[u8], passphrase: Option<&str>) -> String {
        private_key(pem, passphrase, "tls.key", "tls.passphrase").err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn an_encrypted_key_is_read_with_its_passphrase_and_equals_the_plain_one() {
        let decrypted =
            private_key(&fixture("encrypted-key.pem"), Some("secret"), "tls.key", "tls.passphrase").unwrap();
        let plain = private_key(&fixture("key.pem"), None, "tls.key", "tls.passphrase").unwrap();
        assert_eq!(decrypted.secret_der(), plain.secret_der());
    }

    #[test]
    fn each_key_mistake_is_named() {
        let encrypted = fixture("encrypted-key.pem");
        assert!(error(&encrypted, None).contains("tls.key: the private key is encrypted: give its passphrase"));
        assert!(
            error(&encrypted, Some("wrong")).contains("tls.passphrase: wrong passphrase"),
            "{}",
            error(&encrypted, Some("wrong"))
        );
        let legacy = b"-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END EC PRIVATE KEY-----\n";
        assert!(error(legacy, Some("x")).contains("legacy PEM format"));
        assert!(error(b"", None).contains("tls.key: no private key found"));
        let broken = b"-----BEGIN ENCRYPTED PRIVATE KEY-----\n%%%\n-----END ENCRYPTED PRIVATE KEY-----\n";
        assert!(error(broken, Some("x")).contains("tls.key: malformed encrypted key PEM"));
        assert!(certificates(b"nothing", "tls.ca").unwrap_err().to_string().contains("tls.ca: no certificate"));
    }
}
