//! Validation failures as the model reads them (protocol section 9, exact wording).

use std::fmt;

use super::types::JsonType;

/// One way a value fails its schema, at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Dotted for properties, `[i]` for items: `config.host`, `value.items[0]`.
    pub path: String,
    pub kind: ViolationKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViolationKind {
    MissingRequired,
    /// The schema's types in schema order.
    WrongType(Vec<JsonType>),
    /// Compact JSON of the allowed values (`["red","green"]`).
    NotInEnum(String),
    /// Compact JSON of the only allowed value.
    NotConst(String),
    /// A key that an `additionalProperties: false` object does not declare.
    Undeclared,
    /// How many `oneOf` branches matched (anything but one).
    OneOf {
        matched: usize,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = &self.path;
        match &self.kind {
            ViolationKind::MissingRequired => write!(f, "missing required property \"{path}\""),
            ViolationKind::WrongType(types) => {
                write!(f, "\"{path}\" must be ")?;
                for (index, kind) in types.iter().enumerate() {
                    if index > 0 {
                        f.write_str(" or ")?;
                    }
                    f.write_str(kind.phrase())?;
                }
                Ok(())
            }
            ViolationKind::NotInEnum(allowed) => write!(f, "\"{path}\" must be one of {allowed}"),
            ViolationKind::NotConst(expected) => write!(f, "\"{path}\" must equal {expected}"),
            ViolationKind::Undeclared => {
                write!(
                    f,
                    "\"{path}\" is not a declared property (additionalProperties: false)"
                )
            }
            ViolationKind::OneOf { matched } => {
                write!(
                    f,
                    "\"{path}\" must match exactly one oneOf branch (matched {matched})"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_protocol_messages() {
        let check = |path: &str, kind: ViolationKind, expected: &str| {
            let violation = Violation {
                path: path.to_owned(),
                kind,
            };
            assert_eq!(violation.to_string(), expected);
        };
        check(
            "config.host",
            ViolationKind::MissingRequired,
            r#"missing required property "config.host""#,
        );
        check(
            "a",
            ViolationKind::WrongType(vec![JsonType::String]),
            r#""a" must be a string"#,
        );
        check(
            "a",
            ViolationKind::WrongType(vec![JsonType::Number]),
            r#""a" must be a number"#,
        );
        check(
            "a",
            ViolationKind::WrongType(vec![JsonType::Integer]),
            r#""a" must be an integer"#,
        );
        check(
            "a",
            ViolationKind::WrongType(vec![JsonType::Boolean]),
            r#""a" must be a boolean"#,
        );
        check(
            "a",
            ViolationKind::WrongType(vec![JsonType::Array]),
            r#""a" must be an array"#,
        );
        check(
            "a",
            ViolationKind::WrongType(vec![JsonType::Object]),
            r#""a" must be an object"#,
        );
        check(
            "a",
            ViolationKind::WrongType(vec![JsonType::Null]),
            r#""a" must be null"#,
        );
        check(
            "a",
            ViolationKind::WrongType(vec![JsonType::String, JsonType::Integer, JsonType::Null]),
            r#""a" must be a string or an integer or null"#,
        );
        check(
            "color",
            ViolationKind::NotInEnum(r#"["red","green"]"#.to_owned()),
            r#""color" must be one of ["red","green"]"#,
        );
        check(
            "value.v",
            ViolationKind::NotConst("2".to_owned()),
            r#""value.v" must equal 2"#,
        );
        check(
            "servers[1].x",
            ViolationKind::Undeclared,
            r#""servers[1].x" is not a declared property (additionalProperties: false)"#,
        );
        check(
            "value",
            ViolationKind::OneOf { matched: 0 },
            r#""value" must match exactly one oneOf branch (matched 0)"#,
        );
    }
}
