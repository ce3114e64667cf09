//! HTTP methods as small integers, so a route table is an array lookup and the wire carries one byte.

use http::Method;

/// The methods a route can be registered for, in the order of their codes.
pub const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];

/// The code the wire uses for a method outside [`METHODS`]; its name travels as text.
pub const OTHER_METHOD: u8 = 255;

/// The code of a method, or [`OTHER_METHOD`]. Cost: one comparison chain on a pre-parsed `Method`.
pub fn method_code(method: &Method) -> u8 {
    match *method {
        Method::GET => 0,
        Method::HEAD => 1,
        Method::POST => 2,
        Method::PUT => 3,
        Method::DELETE => 4,
        Method::PATCH => 5,
        Method::OPTIONS => 6,
        _ => OTHER_METHOD,
    }
}

/// The code of a method name given at registration, case-sensitive as HTTP methods are.
pub(crate) fn code_of_name(name: &str) -> Option<u8> {
    METHODS.iter().position(|m| *m == name).map(|i| i as u8)
}

pub(crate) const GET: u8 = 0;
pub(crate) const HEAD: u8 = 1;
pub(crate) const OPTIONS: u8 = 6;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_should_round_trip_through_names() {
        for (i, name) in METHODS.iter().enumerate() {
            let method = Method::from_bytes(name.as_bytes()).unwrap();
            assert_eq!(method_code(&method), i as u8);
            assert_eq!(code_of_name(name), Some(i as u8));
        }
        assert_eq!(method_code(&Method::from_bytes(b"PROPFIND").unwrap()), OTHER_METHOD);
        assert_eq!(code_of_name("get"), None);
    }
}
