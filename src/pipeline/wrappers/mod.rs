//! The around-dispatch chain, outermost first: timeout (`pipeline.timeout`) ▸ metrics
//! (`tools/metrics`) ▸ retry (`pipeline.retry`) ▸ the body. Each is an [`ExecuteWrapper`]
//! installed at a fixed priority, so hosts add their own around them.
//!
//! [`ExecuteWrapper`]: super::hooks::ExecuteWrapper

mod metrics;
mod retry;
mod timeout;

pub use metrics::{Metrics, MetricsWrapper, ToolMetrics};
pub use retry::RetryWrapper;
pub use timeout::{TimeoutWrapper, timed_out};
