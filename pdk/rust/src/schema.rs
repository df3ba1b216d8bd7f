//! JSON Schema (2020-12) for tool arguments, results and elicitation forms:
//! a small builder ([`Schema`]), a trait giving the schema of a Rust type
//! ([`JsonSchema`]), and the validation of tool arguments.

use std::collections::{BTreeMap, HashMap};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// What an object schema says about properties it does not list.
#[derive(Clone, Debug, PartialEq)]
enum Additional {
    Any,
    Forbidden,
    Schema(Box<Schema>),
}

/// A JSON Schema object, built with chained methods, written with its
/// keywords and properties in a stable order (properties in the order they
/// were added).
///
/// ```
/// use mcphost_pdk::Schema;
/// let s = Schema::object()
///     .property("query", Schema::string().description("Full-text query"))
///     .optional_property("limit", Schema::integer().minimum(1).maximum(50).default(10))
///     .optional_property("langs", Schema::array(Schema::string()).enum_values(["en", "de"]));
/// ```
///
/// On an array schema the keywords that constrain values (`enum_values`,
/// `format`, `pattern`, `min_length`, `max_length` and the numeric ones)
/// apply to its **items**, as in the Go PDK's tags: the `langs` above
/// allows only `"en"` and `"de"` as items.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    types: Vec<&'static str>,
    title: Option<String>,
    description: Option<String>,
    deprecated: bool,
    format: Option<String>,
    content_encoding: Option<String>,
    pattern: Option<String>,
    enum_values: Option<Vec<Value>>,
    default: Option<Value>,
    examples: Option<Vec<Value>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    multiple_of: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    items: Option<Box<Schema>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    properties: Vec<(String, Schema)>,
    required: Vec<String>,
    additional: Additional,
    /// A schema given as JSON (Schema::raw): written as is, not validated.
    raw: Option<Value>,
}

impl Default for Schema {
    fn default() -> Schema {
        Schema::any()
    }
}

impl Schema {
    fn of(types: &[&'static str]) -> Schema {
        Schema {
            types: types.to_vec(),
            title: None,
            description: None,
            deprecated: false,
            format: None,
            content_encoding: None,
            pattern: None,
            enum_values: None,
            default: None,
            examples: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            multiple_of: None,
            min_length: None,
            max_length: None,
            items: None,
            min_items: None,
            max_items: None,
            unique_items: false,
            properties: Vec::new(),
            required: Vec::new(),
            additional: Additional::Any,
            raw: None,
        }
    }

    /// Any value: `{}`.
    pub fn any() -> Schema {
        Schema::of(&[])
    }
    /// `{"type":"string"}`.
    pub fn string() -> Schema {
        Schema::of(&["string"])
    }
    /// `{"type":"integer"}`.
    pub fn integer() -> Schema {
        Schema::of(&["integer"])
    }
    /// `{"type":"number"}`.
    pub fn number() -> Schema {
        Schema::of(&["number"])
    }
    /// `{"type":"boolean"}`.
    pub fn boolean() -> Schema {
        Schema::of(&["boolean"])
    }
    /// `{"type":"null"}`.
    pub fn null() -> Schema {
        Schema::of(&["null"])
    }
    /// `{"type":"array","items":items}`.
    pub fn array(items: Schema) -> Schema {
        let mut s = Schema::of(&["array"]);
        s.items = Some(Box::new(items));
        s
    }
    /// `{"type":"object"}`; add properties with [`property`](Schema::property)
    /// and [`optional_property`](Schema::optional_property).
    pub fn object() -> Schema {
        Schema::of(&["object"])
    }
    /// An object whose values all follow `values`:
    /// `{"type":"object","additionalProperties":values}`.
    pub fn map(values: Schema) -> Schema {
        let mut s = Schema::object();
        s.additional = Additional::Schema(Box::new(values));
        s
    }
    /// A schema written as given (for keywords the builder lacks). Tool
    /// arguments are not validated against a raw schema, only decoded.
    pub fn raw(schema: Value) -> Schema {
        let mut s = Schema::any();
        s.raw = Some(schema);
        s
    }

    /// Adds a required property (objects).
    pub fn property(self, name: impl Into<String>, schema: Schema) -> Schema {
        self.field(name, schema, true)
    }
    /// Adds an optional property (objects).
    pub fn optional_property(self, name: impl Into<String>, schema: Schema) -> Schema {
        self.field(name, schema, false)
    }
    /// Adds a property, required or not; adding a name again replaces it.
    pub fn field(mut self, name: impl Into<String>, schema: Schema, required: bool) -> Schema {
        let name = name.into();
        self.properties.retain(|(n, _)| *n != name);
        self.required.retain(|n| *n != name);
        if required {
            self.required.push(name.clone());
        }
        self.properties.push((name, schema));
        self
    }
    /// The schema of properties not listed (objects).
    pub fn additional_properties(mut self, schema: Schema) -> Schema {
        self.additional = Additional::Schema(Box::new(schema));
        self
    }
    /// Forbids properties not listed: `"additionalProperties": false`.
    pub fn no_additional_properties(mut self) -> Schema {
        self.additional = Additional::Forbidden;
        self
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Schema {
        self.title = Some(title.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Schema {
        self.description = Some(description.into());
        self
    }
    /// Marks the value deprecated.
    pub fn deprecated(mut self) -> Schema {
        self.deprecated = true;
        self
    }
    /// Also accepts `null` (and adds it to an enum).
    pub fn nullable(mut self) -> Schema {
        if !self.types.is_empty() && !self.types.contains(&"null") {
            self.types.push("null");
        }
        if let Some(e) = &mut self.enum_values {
            if !e.contains(&Value::Null) {
                e.push(Value::Null);
            }
        }
        self
    }
    /// Sets the default value.
    pub fn default<T: Serialize>(mut self, value: T) -> Schema {
        self.default = Some(to_value(value));
        self
    }
    /// Sets example values.
    pub fn examples<T: Serialize>(mut self, values: impl IntoIterator<Item = T>) -> Schema {
        self.examples = Some(values.into_iter().map(to_value).collect());
        self
    }
    /// Sets the base64 `contentEncoding` of a string.
    pub fn content_encoding(mut self, encoding: impl Into<String>) -> Schema {
        self.content_encoding = Some(encoding.into());
        self
    }
    /// Sets `uniqueItems` (arrays).
    pub fn unique_items(mut self) -> Schema {
        self.unique_items = true;
        self
    }
    /// Sets `minItems` (arrays).
    pub fn min_items(mut self, n: u64) -> Schema {
        self.min_items = Some(n);
        self
    }
    /// Sets `maxItems` (arrays).
    pub fn max_items(mut self, n: u64) -> Schema {
        self.max_items = Some(n);
        self
    }

    /// The schema value keywords apply to: the items of an array, else the
    /// schema itself.
    #[allow(clippy::unnecessary_unwrap)] // `if let` here does not borrow-check with Rust 1.63
    fn target(&mut self) -> &mut Schema {
        if self.types.first() == Some(&"array") && self.items.is_some() {
            return self.items.as_mut().unwrap();
        }
        self
    }

    /// The allowed values (`enum`); on an array, of its items.
    pub fn enum_values<T: Serialize>(mut self, values: impl IntoIterator<Item = T>) -> Schema {
        let t = self.target();
        let mut values: Vec<Value> = values.into_iter().map(to_value).collect();
        if t.types.contains(&"null") && !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
        t.enum_values = Some(values);
        self
    }
    /// Sets `format` (`"email"`, `"uri"`, `"date"`, ...); on an array, of its items.
    pub fn format(mut self, format: impl Into<String>) -> Schema {
        self.target().format = Some(format.into());
        self
    }
    /// Sets `pattern` (a regular expression, checked by the host); on an
    /// array, of its items.
    pub fn pattern(mut self, pattern: impl Into<String>) -> Schema {
        self.target().pattern = Some(pattern.into());
        self
    }
    /// Sets `minLength` in characters; on an array, of its items.
    pub fn min_length(mut self, n: u64) -> Schema {
        self.target().min_length = Some(n);
        self
    }
    /// Sets `maxLength` in characters; on an array, of its items.
    pub fn max_length(mut self, n: u64) -> Schema {
        self.target().max_length = Some(n);
        self
    }
    /// Sets `minimum`; on an array, of its items.
    pub fn minimum(mut self, n: impl Into<f64>) -> Schema {
        self.target().minimum = Some(n.into());
        self
    }
    /// Sets `maximum`; on an array, of its items.
    pub fn maximum(mut self, n: impl Into<f64>) -> Schema {
        self.target().maximum = Some(n.into());
        self
    }
    /// Sets `exclusiveMinimum`; on an array, of its items.
    pub fn exclusive_minimum(mut self, n: impl Into<f64>) -> Schema {
        self.target().exclusive_minimum = Some(n.into());
        self
    }
    /// Sets `exclusiveMaximum`; on an array, of its items.
    pub fn exclusive_maximum(mut self, n: impl Into<f64>) -> Schema {
        self.target().exclusive_maximum = Some(n.into());
        self
    }
    /// Sets `multipleOf`; on an array, of its items.
    pub fn multiple_of(mut self, n: impl Into<f64>) -> Schema {
        self.target().multiple_of = Some(n.into());
        self
    }

    /// Whether this is an object schema (`"type": "object"`).
    pub fn is_object(&self) -> bool {
        match &self.raw {
            Some(v) => v.get("type").and_then(Value::as_str) == Some("object"),
            None => self.types.len() == 1 && self.types[0] == "object",
        }
    }

    /// Whether the schema was given as JSON ([`Schema::raw`]).
    pub fn is_raw(&self) -> bool {
        self.raw.is_some()
    }

    /// The schema as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// An input schema: objects without properties forbid any.
    pub(crate) fn for_input(mut self) -> Schema {
        if self.raw.is_none() && self.is_object() && self.properties.is_empty() && self.additional == Additional::Any {
            self.additional = Additional::Forbidden;
        }
        self
    }

    /// An output schema: optional properties may be `null` (serde writes
    /// `None` as `null`), at every level; a schema that is not an object is
    /// wrapped as `{"result": ...}`, as structured results are.
    pub(crate) fn for_output(mut self) -> Schema {
        self.nullable_optionals();
        if self.is_object() || self.raw.is_some() {
            return self;
        }
        Schema::object().property("result", self)
    }

    fn nullable_optionals(&mut self) {
        let required = self.required.clone();
        for (name, s) in &mut self.properties {
            s.nullable_optionals();
            if !required.contains(name) {
                *s = std::mem::take(s).nullable();
            }
        }
        if let Some(items) = &mut self.items {
            items.nullable_optionals();
        }
        if let Additional::Schema(s) = &mut self.additional {
            s.nullable_optionals();
        }
    }
}

/// Numbers are written as integers when they are integers.
fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::from(f as i64)
    } else {
        Value::from(f)
    }
}

fn to_value<T: Serialize>(v: T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        if let Some(raw) = &self.raw {
            return raw.serialize(ser);
        }
        let mut m = ser.serialize_map(None)?;
        match self.types.len() {
            0 => {}
            1 => m.serialize_entry("type", self.types[0])?,
            _ => m.serialize_entry("type", &self.types)?,
        }
        if let Some(v) = &self.title {
            m.serialize_entry("title", v)?;
        }
        if let Some(v) = &self.description {
            m.serialize_entry("description", v)?;
        }
        if self.deprecated {
            m.serialize_entry("deprecated", &true)?;
        }
        if let Some(v) = &self.format {
            m.serialize_entry("format", v)?;
        }
        if let Some(v) = &self.content_encoding {
            m.serialize_entry("contentEncoding", v)?;
        }
        if let Some(v) = &self.pattern {
            m.serialize_entry("pattern", v)?;
        }
        if let Some(v) = &self.enum_values {
            m.serialize_entry("enum", v)?;
        }
        if let Some(v) = &self.default {
            m.serialize_entry("default", v)?;
        }
        if let Some(v) = &self.examples {
            m.serialize_entry("examples", v)?;
        }
        for (k, v) in [
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("exclusiveMinimum", self.exclusive_minimum),
            ("exclusiveMaximum", self.exclusive_maximum),
            ("multipleOf", self.multiple_of),
        ] {
            if let Some(v) = v {
                m.serialize_entry(k, &num(v))?;
            }
        }
        if let Some(v) = self.min_length {
            m.serialize_entry("minLength", &v)?;
        }
        if let Some(v) = self.max_length {
            m.serialize_entry("maxLength", &v)?;
        }
        if let Some(v) = &self.items {
            m.serialize_entry("items", v)?;
        }
        if let Some(v) = self.min_items {
            m.serialize_entry("minItems", &v)?;
        }
        if let Some(v) = self.max_items {
            m.serialize_entry("maxItems", &v)?;
        }
        if self.unique_items {
            m.serialize_entry("uniqueItems", &true)?;
        }
        if !self.properties.is_empty() {
            m.serialize_entry("properties", &Properties(&self.properties))?;
        }
        if !self.required.is_empty() {
            m.serialize_entry("required", &self.required)?;
        }
        match &self.additional {
            Additional::Any => {}
            Additional::Forbidden => m.serialize_entry("additionalProperties", &false)?,
            Additional::Schema(s) => m.serialize_entry("additionalProperties", s)?,
        }
        m.end()
    }
}

struct Properties<'a>(&'a [(String, Schema)]);

impl<'a> Serialize for Properties<'a> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// A Rust type with a JSON Schema. Implemented for the primitive types,
/// `String`, `Vec<T>`, `Option<T>`, `Box<T>`, maps with string keys and
/// `serde_json::Value`, and by the [`schema!`](crate::schema!) and
/// [`schema_enum!`](crate::schema_enum!) macros for your structs and enums.
///
/// Implement it by hand for other types with the [`Schema`] builder.
pub trait JsonSchema {
    /// The type's schema.
    fn json_schema() -> Schema;

    /// Whether a struct field of this type may be absent (`Option<T>`): the
    /// property is then not required.
    fn optional() -> bool {
        false
    }
}

/// The schema of `T` as JSON.
pub fn schema_for<T: JsonSchema>() -> Value {
    T::json_schema().to_value()
}

macro_rules! primitive {
    ($($t:ty => $e:expr),* $(,)?) => {
        $(impl JsonSchema for $t {
            fn json_schema() -> Schema { $e }
        })*
    };
}

primitive! {
    bool => Schema::boolean(),
    String => Schema::string(),
    char => Schema::string().min_length(1).max_length(1),
    i8 => Schema::integer(),
    i16 => Schema::integer(),
    i32 => Schema::integer(),
    i64 => Schema::integer(),
    i128 => Schema::integer(),
    isize => Schema::integer(),
    u8 => Schema::integer().minimum(0),
    u16 => Schema::integer().minimum(0),
    u32 => Schema::integer().minimum(0),
    u64 => Schema::integer().minimum(0),
    u128 => Schema::integer().minimum(0),
    usize => Schema::integer().minimum(0),
    f32 => Schema::number(),
    f64 => Schema::number(),
    Value => Schema::any(),
    Map<String, Value> => Schema::object(),
}

impl<T: JsonSchema> JsonSchema for Vec<T> {
    fn json_schema() -> Schema {
        Schema::array(T::json_schema())
    }
}

impl<T: JsonSchema> JsonSchema for Option<T> {
    fn json_schema() -> Schema {
        T::json_schema()
    }
    fn optional() -> bool {
        true
    }
}

impl<T: JsonSchema> JsonSchema for Box<T> {
    fn json_schema() -> Schema {
        T::json_schema()
    }
    fn optional() -> bool {
        T::optional()
    }
}

impl<T: JsonSchema, S> JsonSchema for HashMap<String, T, S> {
    fn json_schema() -> Schema {
        Schema::map(T::json_schema())
    }
}

impl<T: JsonSchema> JsonSchema for BTreeMap<String, T> {
    fn json_schema() -> Schema {
        Schema::map(T::json_schema())
    }
}

// ---------------------------------------------------------------------------
// Validation of tool arguments.

/// Checks `v` against `s`: type, enum, required, numeric bounds, lengths,
/// item counts, unique items and additional properties (not `format` or
/// `pattern`, which the host checks). Optional properties may be `null`.
pub(crate) fn validate(s: &Schema, v: &Value, path: &str) -> Result<(), String> {
    if s.raw.is_some() {
        return Ok(());
    }
    if !s.types.is_empty() && !s.types.iter().any(|t| type_matches(t, v)) {
        return Err(format!("{}: must be {}, not {}", place(path), type_names(&s.types), json_type_name(v)));
    }
    if let Some(e) = &s.enum_values {
        if !e.iter().any(|x| values_equal(x, v)) {
            let list: Vec<String> = e.iter().map(|x| x.to_string()).collect();
            return Err(format!("{}: must be one of {}", place(path), list.join(", ")));
        }
    }
    match v {
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            if let Some(m) = s.minimum {
                if f < m {
                    return Err(format!("{}: must be >= {}", place(path), fmt_num(m)));
                }
            }
            if let Some(m) = s.maximum {
                if f > m {
                    return Err(format!("{}: must be <= {}", place(path), fmt_num(m)));
                }
            }
            if let Some(m) = s.exclusive_minimum {
                if f <= m {
                    return Err(format!("{}: must be > {}", place(path), fmt_num(m)));
                }
            }
            if let Some(m) = s.exclusive_maximum {
                if f >= m {
                    return Err(format!("{}: must be < {}", place(path), fmt_num(m)));
                }
            }
            if let Some(m) = s.multiple_of {
                if m > 0.0 {
                    let q = f / m;
                    if (q - q.round()).abs() > 1e-9 {
                        return Err(format!("{}: must be a multiple of {}", place(path), fmt_num(m)));
                    }
                }
            }
        }
        // Counting the characters of a long text takes time: only when asked.
        Value::String(x) if s.min_length.is_some() || s.max_length.is_some() => {
            let n = x.chars().count() as u64;
            if let Some(m) = s.min_length {
                if n < m {
                    return Err(format!("{}: must be at least {} characters long", place(path), m));
                }
            }
            if let Some(m) = s.max_length {
                if n > m {
                    return Err(format!("{}: must be at most {} characters long", place(path), m));
                }
            }
        }
        Value::Array(items) => {
            let n = items.len() as u64;
            if let Some(m) = s.min_items {
                if n < m {
                    return Err(format!("{}: must have at least {} items", place(path), m));
                }
            }
            if let Some(m) = s.max_items {
                if n > m {
                    return Err(format!("{}: must have at most {} items", place(path), m));
                }
            }
            if s.unique_items {
                for (i, a) in items.iter().enumerate() {
                    if items[..i].iter().any(|b| values_equal(a, b)) {
                        return Err(format!("{}: items must be unique", place(path)));
                    }
                }
            }
            if let Some(is) = &s.items {
                for (i, item) in items.iter().enumerate() {
                    validate(is, item, &format!("{}[{}]", path, i))?;
                }
            }
        }
        Value::Object(obj) => {
            for r in &s.required {
                if !obj.contains_key(r) {
                    if path.is_empty() {
                        return Err(format!("missing required argument {:?}", r));
                    }
                    return Err(format!("{}: missing required property {:?}", place(path), r));
                }
            }
            for (name, ps) in &s.properties {
                match obj.get(name) {
                    None => continue,
                    Some(Value::Null) if !s.required.contains(name) => continue,
                    Some(val) => validate(ps, val, &join(path, name))?,
                }
            }
            if s.additional != Additional::Any {
                let mut extra: Vec<&String> =
                    obj.keys().filter(|k| !s.properties.iter().any(|(n, _)| n == *k)).collect();
                extra.sort();
                for k in extra {
                    match &s.additional {
                        Additional::Forbidden => return Err(format!("{}: unexpected property {:?}", place(path), k)),
                        Additional::Schema(a) => validate(a, &obj[k.as_str()], &join(path, k))?,
                        Additional::Any => {}
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn place(path: &str) -> String {
    if path.is_empty() {
        "arguments".to_string()
    } else {
        format!("{:?}", path)
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{}.{}", path, name)
    }
}

fn is_integer(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => is_integer(v),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::String(_) => "a string",
        Value::Number(_) if is_integer(v) => "an integer",
        Value::Number(_) => "a number",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn type_names(types: &[&str]) -> String {
    let names: Vec<String> = types
        .iter()
        .map(|t| match *t {
            "null" => "null".to_string(),
            "array" | "integer" | "object" => format!("an {}", t),
            _ => format!("a {}", t),
        })
        .collect();
    names.join(" or ")
}

fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn fmt_num(f: f64) -> String {
    num(f).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builder_writes_keywords_in_order() {
        let s = Schema::object()
            .property("text", Schema::string().description("What to shout"))
            .optional_property("times", Schema::integer().default(1).minimum(1).maximum(5))
            .optional_property("langs", Schema::array(Schema::string()).enum_values(["en", "de"]).unique_items());
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"type":"object","properties":{"text":{"type":"string","description":"What to shout"},"times":{"type":"integer","default":1,"minimum":1,"maximum":5},"langs":{"type":"array","items":{"type":"string","enum":["en","de"]},"uniqueItems":true}},"required":["text"]}"#
        );
    }

    #[test]
    fn validation_messages() {
        let s = Schema::object()
            .property("text", Schema::string().max_length(3))
            .optional_property("n", Schema::integer().minimum(1).maximum(50))
            .optional_property("sort", Schema::string().enum_values(["a", "b"]))
            .optional_property("tags", Schema::array(Schema::string()).unique_items())
            .no_additional_properties();
        let check = |v: Value| validate(&s, &v, "").err();
        assert_eq!(check(json!({"text": "abc"})), None);
        assert_eq!(check(json!({"text": "abc", "n": null})), None);
        assert_eq!(check(json!({})).unwrap(), r#"missing required argument "text""#);
        assert_eq!(check(json!({"text": 1})).unwrap(), r#""text": must be a string, not an integer"#);
        assert_eq!(check(json!({"text": "abcd"})).unwrap(), r#""text": must be at most 3 characters long"#);
        assert_eq!(check(json!({"text": "a", "n": 51})).unwrap(), r#""n": must be <= 50"#);
        assert_eq!(check(json!({"text": "a", "n": 1.5})).unwrap(), r#""n": must be an integer, not a number"#);
        assert_eq!(check(json!({"text": "a", "sort": "c"})).unwrap(), r#""sort": must be one of "a", "b""#);
        assert_eq!(check(json!({"text": "a", "tags": ["x", "x"]})).unwrap(), r#""tags": items must be unique"#);
        assert_eq!(check(json!({"text": "a", "tags": [1]})).unwrap(), r#""tags[0]": must be a string, not an integer"#);
        assert_eq!(check(json!({"text": "a", "zz": 1})).unwrap(), r#"arguments: unexpected property "zz""#);
        assert_eq!(check(json!([])).unwrap(), "arguments: must be an object, not an array");
    }

    #[test]
    fn output_schemas_allow_null_for_optional_properties_and_wrap_non_objects() {
        let s = Schema::object()
            .property("a", Schema::string())
            .optional_property("b", Schema::string().enum_values(["x"]))
            .for_output();
        assert_eq!(
            s.to_value(),
            json!({"type":"object","properties":{"a":{"type":"string"},"b":{"type":["string","null"],"enum":["x",null]}},"required":["a"]})
        );
        let w = <Vec<u32>>::json_schema().for_output();
        assert_eq!(
            w.to_value(),
            json!({"type":"object","properties":{"result":{"type":"array","items":{"type":"integer","minimum":0}}},"required":["result"]})
        );
    }
}
