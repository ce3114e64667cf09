//! Calling JavaScript from the one-thread engine's host, on the JavaScript thread: the dispatcher and the
//! lifecycle listener held by reference, each called with `napi_make_callback`, as a native callback, so
//! microtasks and `process.nextTick` run when it returns (an async handler that settles at once is answered in
//! the same turn).

use std::cell::Cell;

use napi::sys;

/// The host's two JavaScript functions and the async context they are called in. Released by [`release`]
/// (idempotent), on the JavaScript thread.
///
/// [`release`]: JsCalls::release
pub(crate) struct JsCalls {
    env: sys::napi_env,
    dispatch: Cell<sys::napi_ref>,
    /// The lifecycle listener: `(event, failure) => void`.
    events: Cell<sys::napi_ref>,
    context: Cell<sys::napi_async_context>,
}

impl JsCalls {
    /// Holds `dispatch` and `events` (live function values of `env`), called on the thread that made them.
    pub(crate) fn new(env: sys::napi_env, dispatch: sys::napi_value, events: sys::napi_value) -> napi::Result<Self> {
        let mut reference = std::ptr::null_mut();
        let mut listener = std::ptr::null_mut();
        let mut context = std::ptr::null_mut();
        // SAFETY: napi calls on the calling (JavaScript) thread with its environment and live function values.
        unsafe {
            check(sys::napi_create_reference(env, dispatch, 1, &mut reference))?;
            check(sys::napi_create_reference(env, events, 1, &mut listener))?;
            let mut name = std::ptr::null_mut();
            check(sys::napi_create_string_utf8(env, c"gust".as_ptr(), 4, &mut name))?;
            check(sys::napi_async_init(env, std::ptr::null_mut(), name, &mut context))?;
        }
        Ok(Self { env, dispatch: Cell::new(reference), events: Cell::new(listener), context: Cell::new(context) })
    }

    /// Calls the dispatcher (it takes the waiting batches itself). Returns whether it wants [`turn_end`]: a
    /// handler it ran is still running, or a flush is scheduled.
    ///
    /// [`turn_end`]: JsCalls::turn_end
    pub(crate) fn dispatch(&self) -> bool {
        self.call_with(&self.dispatch, |_, _| {})
    }

    /// Calls the dispatcher with `true`: the turn's batches and their microtasks have run, and what they wrote
    /// goes out now, from this callback, rather than from a later phase of the loop.
    pub(crate) fn turn_end(&self) {
        // SAFETY: called by `call_with` on the JavaScript thread, inside the handle scope it opened.
        self.call_with(&self.dispatch, |env, args| unsafe {
            let mut yes = std::ptr::null_mut();
            sys::napi_get_boolean(env, true, &mut yes);
            args.push(yes);
        });
    }

    /// Calls the lifecycle listener with `event` and, when the engine failed, why.
    pub(crate) fn event(&self, event: &str, failure: Option<&str>) {
        // SAFETY: called by `call_with` on the JavaScript thread, inside the handle scope it opened.
        let _ = self.call_with(&self.events, |env, args| unsafe {
            let mut name = std::ptr::null_mut();
            sys::napi_create_string_utf8(env, event.as_ptr().cast(), event.len() as isize, &mut name);
            let mut why = std::ptr::null_mut();
            match failure {
                Some(text) => {
                    sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut why);
                }
                None => {
                    sys::napi_get_null(env, &mut why);
                }
            }
            args.push(name);
            args.push(why);
        });
    }

    /// Calls the function behind `function` with the arguments `args` builds, as a native callback. Returns
    /// whether it returned `true`.
    fn call_with(
        &self,
        function: &Cell<sys::napi_ref>,
        args: impl FnOnce(sys::napi_env, &mut Vec<sys::napi_value>),
    ) -> bool {
        let env = self.env;
        let mut returned = false;
        // SAFETY: on the JavaScript thread, from a libuv callback (no JavaScript on the stack), with the
        // environment the functions were held in; every value lives in the handle scope opened here.
        unsafe {
            let mut scope = std::ptr::null_mut();
            if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
                return false;
            }
            let mut func = std::ptr::null_mut();
            let mut recv = std::ptr::null_mut();
            if !function.get().is_null()
                && sys::napi_get_reference_value(env, function.get(), &mut func) == sys::Status::napi_ok
                && !func.is_null()
                // An object, as `napi_make_callback` wants one (the package's callbacks are arrow functions).
                && sys::napi_get_global(env, &mut recv) == sys::Status::napi_ok
            {
                let mut argv = Vec::new();
                args(env, &mut argv);
                let mut result = std::ptr::null_mut();
                let status = sys::napi_make_callback(
                    env,
                    self.context.get(),
                    recv,
                    func,
                    argv.len(),
                    argv.as_ptr(),
                    &mut result,
                );
                if status == sys::Status::napi_pending_exception {
                    // The package's callbacks never throw; should one, the process hears it as an uncaught
                    // exception, as it would from a threadsafe call.
                    let mut err = std::ptr::null_mut();
                    sys::napi_get_and_clear_last_exception(env, &mut err);
                    sys::napi_fatal_exception(env, err);
                } else if status == sys::Status::napi_ok && !result.is_null() {
                    // Anything but a boolean (the lifecycle listener's `undefined`) reads as false.
                    sys::napi_get_value_bool(env, result, &mut returned);
                }
            }
            sys::napi_close_handle_scope(env, scope);
        }
        returned
    }

    /// Lets go of both functions and the async context. Idempotent.
    pub(crate) fn release(&self) {
        // SAFETY: on the JavaScript thread, with the environment they were made in; each is released once (the
        // cells are emptied).
        unsafe {
            for function in [&self.dispatch, &self.events] {
                let reference = function.replace(std::ptr::null_mut());
                if !reference.is_null() {
                    sys::napi_delete_reference(self.env, reference);
                }
            }
            let context = self.context.replace(std::ptr::null_mut());
            if !context.is_null() {
                sys::napi_async_destroy(self.env, context);
            }
        }
    }
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!("gust: a Node-API call failed with status {status}")))
    }
}
