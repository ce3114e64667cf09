use gust_core::{RouteTableBuilder, Target};
use napi_derive::napi;

/// Checks routes as they are registered, so `app.get(...)` throws at the line that conflicts rather than at
/// `listen()`. Holds no handlers: the table that serves is built from the facade's list at `listen()`.
#[napi]
pub struct BindingRouteRegistry {
    builder: RouteTableBuilder,
}

#[napi]
impl BindingRouteRegistry {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self { builder: gust_core::RouteTable::builder() }
    }

    /// Registers a route; throws naming both routes on a conflict. Returns the parameter names in order.
    #[napi]
    pub fn add(&mut self, method: String, path: String) -> napi::Result<Vec<String>> {
        self.builder.add(&method, &path, Target::Dynamic(0)).map_err(crate::js_error)
    }
}
