//! Serde output appended to a `String` in place: large JSON is assembled in one buffer
//! instead of serialized apart and copied in.

use serde::Serialize;

/// Appends the compact JSON of `value` to `out` (`null` if it cannot be serialized, which
/// protocol types always can).
pub fn append_serialized(out: &mut String, value: &impl Serialize) {
    let start = out.len();
    if serde_json::to_writer(Utf8Sink(out), value).is_err() {
        out.truncate(start);
        out.push_str("null");
    }
}

/// An `io::Write` into a `String`. serde_json writes whole UTF-8 fragments (it cuts strings
/// only at ASCII escapes), so each write is checked, never split.
struct Utf8Sink<'a>(&'a mut String);

impl std::io::Write for Utf8Sink<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let text = std::str::from_utf8(bytes)
            .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))?;
        self.0.push_str(text);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn appends_what_serde_json_writes_multibyte_text_and_escapes_included() {
        let value = json!({ "a": "é\"\n😀\u{1}", "b": [1, 2.5, null] });
        let mut out = String::from("prefix:");
        append_serialized(&mut out, &value);
        assert_eq!(
            out,
            format!("prefix:{}", serde_json::to_string(&value).unwrap())
        );
    }

    #[test]
    fn an_unserializable_value_appends_null_and_nothing_else() {
        struct Failing;
        impl Serialize for Failing {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::{Error, SerializeSeq};
                let mut seq = serializer.serialize_seq(None)?;
                seq.serialize_element(&1)?;
                Err(S::Error::custom("no"))
            }
        }
        let mut out = String::from("[");
        append_serialized(&mut out, &Failing);
        assert_eq!(out, "[null");
    }
}
