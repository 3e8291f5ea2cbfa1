//! Paths into JSON values (`config.host`, `servers[1].host`), shared by every message that names a place.

use serde_json::Value;

/// One step from a container to a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// Renders `root` followed by `.key` and `[i]` steps; with an empty root a leading key is bare.
pub fn render_path(root: &str, segments: &[Segment<'_>]) -> String {
    let mut path = String::from(root);
    for segment in segments {
        match segment {
            Segment::Key(key) if path.is_empty() => path.push_str(key),
            Segment::Key(key) => {
                path.push('.');
                path.push_str(key);
            }
            Segment::Index(index) => {
                path.push('[');
                path.push_str(&index.to_string());
                path.push(']');
            }
        }
    }
    path
}

/// Finds the segments leading from `root` to each target (a member's address), in one
/// iterative walk; a target that is not inside `root` gets `None`.
///
/// Walkers record addresses instead of building paths as they go, so success paths never
/// pay for path bookkeeping.
pub fn locate<'a>(root: &'a Value, targets: &[*const Value]) -> Vec<Option<Vec<Segment<'a>>>> {
    let mut found: Vec<Option<Vec<Segment<'a>>>> = vec![None; targets.len()];
    let mut remaining = targets.len();
    let mut sorted: Vec<(usize, usize)> = targets
        .iter()
        .enumerate()
        .map(|(index, target)| (*target as usize, index))
        .collect();
    sorted.sort_unstable();
    let mut segments: Vec<Segment<'a>> = Vec::new();
    // (value, depth of the value, segment that leads to it)
    let mut pending: Vec<(&'a Value, usize, Option<Segment<'a>>)> = vec![(root, 0, None)];
    while let Some((value, depth, step)) = pending.pop() {
        if remaining == 0 {
            break;
        }
        segments.truncate(depth.saturating_sub(1));
        if let Some(step) = step {
            segments.push(step);
        }
        let address = value as *const Value as usize;
        let start = sorted.partition_point(|(candidate, _)| *candidate < address);
        for (candidate, index) in &sorted[start..] {
            if *candidate != address {
                break;
            }
            if let Some(slot) = found.get_mut(*index)
                && slot.is_none()
            {
                *slot = Some(segments.clone());
                remaining -= 1;
            }
        }
        match value {
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate().rev() {
                    pending.push((item, depth + 1, Some(Segment::Index(index))));
                }
            }
            Value::Object(members) => {
                for (key, member) in members.iter().rev() {
                    pending.push((member, depth + 1, Some(Segment::Key(key))));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_paths() {
        let check = |root: &str, segments: &[Segment<'_>], expected: &str| {
            assert_eq!(render_path(root, segments), expected);
        };
        check("args", &[], "args");
        check("", &[], "");
        check(
            "",
            &[Segment::Key("config"), Segment::Key("host")],
            "config.host",
        );
        check(
            "",
            &[
                Segment::Key("servers"),
                Segment::Index(1),
                Segment::Key("host"),
            ],
            "servers[1].host",
        );
        check(
            "value",
            &[Segment::Key("items"), Segment::Index(0)],
            "value.items[0]",
        );
        check("", &[Segment::Index(2)], "[2]");
    }

    #[test]
    fn locates_members_by_address() {
        let value = json!({"a": [1, {"b": null}], "c": "x"});
        let b = &value["a"][1]["b"];
        let c = &value["c"];
        let outside = json!(1);
        let found = locate(&value, &[b, &value, c, &outside, b]);
        let rendered: Vec<Option<String>> = found
            .iter()
            .map(|segments| segments.as_ref().map(|s| render_path("value", s)))
            .collect();
        assert_eq!(
            rendered,
            vec![
                Some("value.a[1].b".to_owned()),
                Some("value".to_owned()),
                Some("value.c".to_owned()),
                None,
                Some("value.a[1].b".to_owned()),
            ]
        );
    }
}
