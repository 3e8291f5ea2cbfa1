//! A `JsRuntime` whose teardown never overlaps another's, anywhere in the process.
//!
//! v8x (deno_core's QuickJS backend) counts the references to the process-wide V8 platform
//! with a plain integer, and every isolate's teardown takes and releases one
//! (`OwnedIsolate::drop` copies the platform from `get_current_platform()` and drops the copy
//! outside any lock). Isolates live and die on their own threads here, so two teardowns at
//! once could lose an update, and at zero v8x frees the platform under everyone else: seen
//! as a rare segfault in `drop_in_place<Box<dyn PlatformImpl>>` on an isolate thread while
//! many runs overlapped. Nothing else copies the platform after start-up, so serializing
//! teardowns closes the race. A teardown happens after the run's caller has its answer.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

use deno_core::{JsRuntime, RuntimeOptions};
use parking_lot::Mutex;

/// Held while a runtime is torn down.
static TEARDOWN: Mutex<()> = Mutex::new(());

/// A [`JsRuntime`] dropped under the process-wide teardown lock.
pub(crate) struct GuardedRuntime(ManuallyDrop<JsRuntime>);

impl GuardedRuntime {
    pub(crate) fn try_new(options: RuntimeOptions) -> Result<Self, deno_core::error::CoreError> {
        JsRuntime::try_new(options).map(|runtime| Self(ManuallyDrop::new(runtime)))
    }
}

impl Drop for GuardedRuntime {
    fn drop(&mut self) {
        let _serialized = TEARDOWN.lock();
        // SAFETY: the runtime is dropped exactly once, here, and never used afterwards.
        unsafe { ManuallyDrop::drop(&mut self.0) };
    }
}

impl Deref for GuardedRuntime {
    type Target = JsRuntime;

    fn deref(&self) -> &JsRuntime {
        &self.0
    }
}

impl DerefMut for GuardedRuntime {
    fn deref_mut(&mut self) -> &mut JsRuntime {
        &mut self.0
    }
}
