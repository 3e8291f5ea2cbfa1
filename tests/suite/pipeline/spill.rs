//! The built-in spill policy's place in the pipeline: after every post-execute listener
//! (so a listener sees, and may replace, the whole content, and a replacement is bounded
//! too), before `finalizeContent` (which sees the preview); direct calls only.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::pipeline::hooks::PostDecision;
use dsh_tools::tool::{BodyOutput, ContentBlock, ToolExecutionInput, ToolRunContext};
use parking_lot::Mutex;
use runtime_support::*;
use serde_json::json;
use std::sync::Arc;

const THRESHOLD: usize = 40_000;

fn big() -> String {
    (0..20_000).map(|i| format!("{i}\n")).collect()
}

#[tokio::test]
async fn runs_after_post_execute_and_before_finalize_content() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime_with(json!({ "spill": { "dir": dir.path().display().to_string() } }));
    let finalized = Arc::new(Mutex::new(String::new()));
    let seen = finalized.clone();
    let tool = any_output("t")
        .finalize_content(Arc::new(move |_, result| {
            *seen.lock() = result.text();
            None
        }))
        .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!(big()))) })
        .unwrap();
    runtime.register(tool, None).unwrap();
    let journal = Journal::new();
    let post_saw = Arc::new(Mutex::new(0));
    let saw = post_saw.clone();
    let post = Post::new("p", &journal, move |_, result| {
        *saw.lock() = result.text().len();
        Ok(PostDecision::accept())
    });
    runtime.add_post_execute(i32::MAX, None, post);
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(
        *post_saw.lock(),
        big().len(),
        "post-execute saw the whole text"
    );
    let finalized = finalized.lock().clone();
    assert_eq!(finalized, result.text(), "finalizeContent saw the preview");
    assert!(finalized.len() <= THRESHOLD && finalized.contains(" is saved in "));
    assert_eq!(result.value(), Some(&json!(big())));
    let spill = &result.meta.as_ref().unwrap()["spill"];
    let saved = std::fs::read_to_string(spill["path"].as_str().unwrap()).unwrap();
    assert_eq!(saved, big());
}

#[tokio::test]
async fn a_post_execute_replacement_is_bounded_too_and_other_blocks_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime_with(json!({ "spill": { "dir": dir.path().display().to_string() } }));
    runtime
        .register(constant("t", json!("small")), None)
        .unwrap();
    let image = json!({ "type": "image", "data": "AAAA", "mimeType": "image/png" });
    let replacement = vec![
        ContentBlock::text(big()),
        serde_json::from_value(image.clone()).unwrap(),
    ];
    let journal = Journal::new();
    runtime.add_post_execute(
        0,
        None,
        Post::fixed(
            "p",
            &journal,
            PostDecision::Accept {
                content: Some(replacement),
                value: None,
                additional_contexts: Vec::new(),
                structured_content: None,
            },
        ),
    );
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(result.value(), Some(&json!("small")));
    assert_eq!(result.content.len(), 2);
    assert!(result.text().len() <= THRESHOLD);
    assert_eq!(serde_json::to_value(&result.content[1]).unwrap(), image);
    assert!(result.meta.unwrap()["spill"]["bytes"] == big().len());
}

#[tokio::test]
async fn sub_calls_keep_their_content_for_the_dispatch_log_stage() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime_with(json!({ "spill": { "dir": dir.path().display().to_string() } }));
    runtime.register(constant("t", json!(big())), None).unwrap();
    // Only the host mints tokens: take a real one from a call.
    let token = Arc::new(Mutex::new(None));
    let taken = token.clone();
    let outer = any_output("outer")
        .body(move |ctx: ToolRunContext| {
            *taken.lock() = Some(ctx.execution.token);
            async { Ok(BodyOutput::from(json!(null))) }
        })
        .unwrap();
    runtime.register(outer, None).unwrap();
    runtime.execute(call("outer", json!({}))).await;
    let nested = ToolExecutionInput {
        parent: *token.lock(),
        ..call("t", json!({}))
    };
    assert!(nested.parent.is_some());
    let result = runtime.execute(nested).await;
    assert_eq!(result.text(), big());
    assert_eq!(result.meta, None);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
