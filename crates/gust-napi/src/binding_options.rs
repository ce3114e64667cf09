use std::net::ToSocketAddrs;
use std::time::Duration;

use napi_derive::napi;

/// `listen()` options after the TypeScript facade has validated them and filled in defaults.
#[napi(object)]
pub struct BindingOptions {
    pub hostname: String,
    pub port: u32,
    pub max_body_size: u32,
    pub max_header_size: u32,
    /// Milliseconds.
    pub header_timeout: u32,
    /// Milliseconds.
    pub idle_timeout: u32,
    /// Milliseconds.
    pub body_timeout: u32,
    /// Milliseconds; 0 disables the timeout.
    pub handler_timeout: u32,
    pub max_pending: u32,
}

impl BindingOptions {
    pub(crate) fn into_config(self) -> napi::Result<gust_core::Config> {
        let port = u16::try_from(self.port)
            .map_err(|_| napi::Error::new(napi::Status::InvalidArg, format!("port {} is out of range", self.port)))?;
        let addr =
            (self.hostname.as_str(), port).to_socket_addrs().ok().and_then(|mut addrs| addrs.next()).ok_or_else(
                || napi::Error::new(napi::Status::InvalidArg, format!("hostname {:?} does not resolve", self.hostname)),
            )?;
        let config = gust_core::Config {
            addr,
            max_body_size: self.max_body_size as usize,
            max_header_size: self.max_header_size as usize,
            header_timeout: Duration::from_millis(self.header_timeout.into()),
            idle_timeout: Duration::from_millis(self.idle_timeout.into()),
            body_timeout: Duration::from_millis(self.body_timeout.into()),
            handler_timeout: (self.handler_timeout > 0).then(|| Duration::from_millis(self.handler_timeout.into())),
            max_pending: self.max_pending as usize,
        };
        config.validate().map_err(crate::js_error)?;
        Ok(config)
    }
}
