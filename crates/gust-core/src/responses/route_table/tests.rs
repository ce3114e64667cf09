//! The route table's lookups, conflicts and fallbacks.
use super::*;

fn dynamic(i: u32) -> Target {
    Target::Dynamic(i)
}

fn found(table: &RouteTable, method: u8, path: &str) -> Option<(u32, Vec<String>)> {
    match table.lookup(method, path) {
        Lookup::Found { target: Target::Dynamic(i), params, empty_tail, .. } => {
            let mut values: Vec<String> = params.iter().map(|(_, v)| v.to_owned()).collect();
            if empty_tail {
                values.push(String::new());
            }
            Some((*i, values))
        }
        _ => None,
    }
}

#[test]
fn static_routes_should_win_over_params_at_the_same_depth() {
    let mut b = RouteTable::builder();
    b.add("GET", "/id/:id", dynamic(0)).unwrap();
    b.add("GET", "/id/new", dynamic(1)).unwrap();
    b.add("GET", "/files/*", dynamic(2)).unwrap();
    let t = b.build();
    assert_eq!(found(&t, method::GET, "/id/new"), Some((1, vec![])));
    assert_eq!(found(&t, method::GET, "/id/42"), Some((0, vec!["42".into()])));
    assert_eq!(found(&t, method::GET, "/files/a/b.txt"), Some((2, vec!["a/b.txt".into()])));
    assert_eq!(found(&t, method::GET, "/id/42/x"), None);
}

#[test]
fn params_should_stay_raw_for_the_caller_to_decode() {
    let mut b = RouteTable::builder();
    b.add("GET", "/u/:name", dynamic(0)).unwrap();
    let t = b.build();
    assert_eq!(found(&t, method::GET, "/u/a%2Fb"), Some((0, vec!["a%2Fb".into()])));
}

#[test]
fn conflicting_routes_should_be_rejected_naming_both() {
    let mut b = RouteTable::builder();
    b.add("GET", "/id/:id", dynamic(0)).unwrap();
    let err = b.add("GET", "/id/:name", dynamic(1)).unwrap_err();
    assert!(err.is_route());
    let msg = err.to_string();
    assert!(msg.contains("\"/id/:name\"") && msg.contains("\"/id/:id\""), "{msg}");
    let err = b.add("GET", "/id/:id", dynamic(2)).unwrap_err();
    assert_eq!(err.to_string(), "route GET /id/:id is already registered");
    assert!(b.add("POST", "/id/:id", dynamic(3)).is_ok(), "another method on the same path is no conflict");
}

#[test]
fn unknown_methods_should_be_rejected() {
    let err = RouteTable::builder().add("FETCH", "/", dynamic(0)).unwrap_err();
    assert!(err.to_string().contains("\"FETCH\""));
}

#[test]
fn head_should_fall_back_to_get_and_other_methods_get_405_with_allow() {
    let mut b = RouteTable::builder();
    b.add("GET", "/a", dynamic(0)).unwrap();
    b.add("POST", "/a", dynamic(1)).unwrap();
    let t = b.build();
    assert_eq!(found(&t, method::HEAD, "/a"), Some((0, vec![])));
    match t.lookup(method::code_of_name("DELETE").unwrap(), "/a") {
        Lookup::MethodNotAllowed { allow } => assert_eq!(allow, "GET, HEAD, POST, OPTIONS"),
        other => panic!("expected 405, got {other:?}"),
    }
    assert!(matches!(t.lookup(method::OPTIONS, "/a"), Lookup::Options { .. }));
    assert!(matches!(t.lookup(method::GET, "/b"), Lookup::NotFound { .. }));
}

#[test]
fn a_catch_all_should_answer_its_empty_tail_unless_a_route_claims_it() {
    let mut b = RouteTable::builder();
    b.add("GET", "/files/*", dynamic(0)).unwrap();
    b.add("GET", "/*", dynamic(1)).unwrap();
    b.add("GET", "/docs/*rest", dynamic(2)).unwrap();
    b.add("GET", "/docs/", dynamic(3)).unwrap();
    let t = b.build();
    assert_eq!(found(&t, method::GET, "/files/"), Some((0, vec!["".into()])));
    assert_eq!(found(&t, method::GET, "/files/a"), Some((0, vec!["a".into()])));
    assert_eq!(found(&t, method::GET, "/"), Some((1, vec!["".into()])));
    assert_eq!(found(&t, method::GET, "/docs/"), Some((3, vec![])));
    assert_eq!(found(&t, method::GET, "/docs/x"), Some((2, vec!["x".into()])));
    assert_eq!(found(&t, method::GET, "/files"), Some((1, vec!["files".into()])));
}

#[test]
fn options_star_should_allow_every_method_some_route_answers() {
    let mut b = RouteTable::builder();
    b.add("GET", "/a", dynamic(0)).unwrap();
    b.add("DELETE", "/b", dynamic(1)).unwrap();
    assert_eq!(b.build().allow_any(), "GET, HEAD, DELETE, OPTIONS");
    assert_eq!(RouteTable::builder().build().allow_any(), "OPTIONS");
}

#[test]
fn all_should_match_any_method() {
    let mut b = RouteTable::builder();
    b.add("ALL", "/any", dynamic(7)).unwrap();
    let t = b.build();
    assert_eq!(found(&t, method::code_of_name("PATCH").unwrap(), "/any"), Some((7, vec![])));
    assert_eq!(found(&t, crate::values::method::OTHER_METHOD, "/any"), Some((7, vec![])));
}
