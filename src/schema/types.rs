//! The JSON types schemas name, how violations phrase them, and which values they admit.

use serde_json::Value;

use crate::json::is_integer;

/// A JSON Schema type name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    String,
    Number,
    Integer,
    Boolean,
    Null,
    Array,
    Object,
}

impl JsonType {
    pub(crate) const ALL: [JsonType; 7] = [
        JsonType::String,
        JsonType::Number,
        JsonType::Integer,
        JsonType::Boolean,
        JsonType::Null,
        JsonType::Array,
        JsonType::Object,
    ];

    pub fn from_name(name: &str) -> Option<JsonType> {
        JsonType::ALL
            .into_iter()
            .find(|candidate| candidate.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::Boolean => "boolean",
            JsonType::Null => "null",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }

    /// How a violation names the type: `a string`, `an integer`, `null`.
    pub fn phrase(self) -> &'static str {
        match self {
            JsonType::String => "a string",
            JsonType::Number => "a number",
            JsonType::Integer => "an integer",
            JsonType::Boolean => "a boolean",
            JsonType::Null => "null",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
        }
    }

    /// An integer is a number with no fractional part, whatever its text.
    pub fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (JsonType::String, Value::String(_))
            | (JsonType::Number, Value::Number(_))
            | (JsonType::Boolean, Value::Bool(_))
            | (JsonType::Null, Value::Null)
            | (JsonType::Array, Value::Array(_))
            | (JsonType::Object, Value::Object(_)) => true,
            (JsonType::Integer, Value::Number(number)) => is_integer(number),
            _ => false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::json::parse;

    #[test]
    fn admits_values_of_each_type() {
        let samples = ["\"s\"", "1.5", "2", "2.0", "true", "null", "[]", "{}"];
        let check = |kind: JsonType, expected: [bool; 8]| {
            let admitted = samples.map(|text| kind.admits(&parse(text).unwrap()));
            assert_eq!(admitted, expected, "{kind:?}");
        };
        check(
            JsonType::String,
            [true, false, false, false, false, false, false, false],
        );
        check(
            JsonType::Number,
            [false, true, true, true, false, false, false, false],
        );
        check(
            JsonType::Integer,
            [false, false, true, true, false, false, false, false],
        );
        check(
            JsonType::Boolean,
            [false, false, false, false, true, false, false, false],
        );
        check(
            JsonType::Null,
            [false, false, false, false, false, true, false, false],
        );
        check(
            JsonType::Array,
            [false, false, false, false, false, false, true, false],
        );
        check(
            JsonType::Object,
            [false, false, false, false, false, false, false, true],
        );
    }

    #[test]
    fn names_round_trip() {
        for kind in JsonType::ALL {
            assert_eq!(JsonType::from_name(kind.name()), Some(kind));
        }
        assert_eq!(JsonType::from_name("json"), None);
    }
}
