//! Making the engine look for termination at its very next call or loop back-edge.
//!
//! QuickJS asks its interrupt handler (which sees a termination request) only once every
//! 10,000 calls or back-edges. When each of those is a slow built-in, `while (true)
//! JSON.stringify(big)` saw a request only after minutes. QuickJS's own
//! `JS_TriggerInterrupt` zeroes the countdown, so the next call or back-edge asks the
//! handler: a loop of built-ins then ends as soon as the built-in in progress returns.
//!
//! v8x (deno_core's QuickJS backend) links that function but exposes neither it nor the
//! `JSContext` it takes. A `v8::Context` handle there points at a slot holding a `JSValue`
//! tagged `JS_TAG_V8_CONTEXT` whose pointer is the context, or at the context itself (v8x's
//! `ctx_of`); [`EngineContext::of_main`] reads it the same way. The pinned v8x version is the
//! one whose layout this mirrors; `code_mode::runaways` (no isolate thread left parked after
//! built-in loops) fails if a different layout stops the trigger from working.

use std::ffi::c_void;
use std::ptr::NonNull;

use deno_core::{JsRuntime, v8};

unsafe extern "C" {
    /// QuickJS: `ctx->interrupt_counter = 0`.
    fn JS_TriggerInterrupt(ctx: *mut c_void);
}

/// v8x's tag for a `JSValue` that wraps a `JSContext` (`core.rs`, `JS_TAG_V8_CONTEXT`).
const JS_TAG_V8_CONTEXT: i64 = 0x7632;

/// QuickJS's `JSValue` on 64-bit targets (no NaN boxing): a pointer-sized union, then the tag.
#[repr(C)]
struct RawValue {
    pointer: *mut c_void,
    tag: i64,
}

/// The engine context a run executes in.
pub(crate) struct EngineContext(NonNull<c_void>);

// SAFETY: the pointer is only passed to `JS_TriggerInterrupt`, and only while its isolate is
// alive (`terminator::LeftEngine` detaches it before the isolate is dropped).
unsafe impl Send for EngineContext {}

impl EngineContext {
    /// The runtime's main context, where deno_core runs every script.
    pub(crate) fn of_main(runtime: &mut JsRuntime) -> Option<Self> {
        if cfg!(not(target_pointer_width = "64")) {
            return None;
        }
        let context = runtime.main_context();
        deno_core::scope!(scope, runtime);
        let local = v8::Local::new(scope, context);
        let handle: *const v8::Context = &*local;
        // SAFETY: v8x hands out context handles that point at a `JSValue` slot or at the
        // `JSContext` itself, whose first word is a GC header; both are at least 16 bytes.
        let value = unsafe { &*handle.cast::<RawValue>() };
        let context = if value.tag == JS_TAG_V8_CONTEXT {
            value.pointer
        } else {
            handle.cast_mut().cast()
        };
        NonNull::new(context).map(Self)
    }

    /// Makes the engine call its interrupt handler at the next call or back-edge.
    ///
    /// # Safety
    /// The context's isolate must be alive. The store races the engine thread's decrement of
    /// the same `int` (QuickJS has no atomic for it): at worst the decrement wins and the next
    /// request, a millisecond later, tries again.
    pub(crate) unsafe fn trigger(&self) {
        // SAFETY: see above; the function only stores 0 into the context's countdown.
        unsafe { JS_TriggerInterrupt(self.0.as_ptr()) }
    }
}
