//! RFC 6570 URI templates, for matching URIs (not expanding them), as the
//! Go PDK does: expressions with the operators none, `+`, `#`, `/`, `.`,
//! `;`, `?` and `&`, several variables per expression, explode (`*`) and
//! prefix (`:n`) modifiers. Matching tries the shortest expansion of each
//! expression first and backtracks; values are percent-decoded.

use std::collections::BTreeMap;

/// The variables of a matched URI.
pub type Vars = BTreeMap<String, String>;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq)]
struct Part {
    literal: String,
    /// 0 for a literal; b' ' for an expression without operator.
    op: u8,
    vars: Vec<Var>,
}

#[derive(Clone, Debug, PartialEq)]
struct Var {
    name: String,
    explode: bool,
    prefix: usize,
}

impl UriTemplate {
    pub(crate) fn parse(raw: &str) -> Result<UriTemplate, String> {
        let mut parts = Vec::new();
        let mut s = raw;
        while !s.is_empty() {
            let open = match s.find('{') {
                Some(i) => i,
                None => {
                    if s.contains('}') {
                        return Err(format!("uri template {:?}: unbalanced }}", raw));
                    }
                    parts.push(Part { literal: s.to_string(), op: 0, vars: Vec::new() });
                    break;
                }
            };
            if open > 0 {
                let lit = &s[..open];
                if lit.contains('}') {
                    return Err(format!("uri template {:?}: unbalanced }}", raw));
                }
                parts.push(Part { literal: lit.to_string(), op: 0, vars: Vec::new() });
            }
            let end = match s[open..].find('}') {
                Some(i) => i,
                None => return Err(format!("uri template {:?}: unclosed {{", raw)),
            };
            let mut expr = &s[open + 1..open + end];
            s = &s[open + end + 1..];
            let mut p = Part { literal: String::new(), op: b' ', vars: Vec::new() };
            if let Some(c) = expr.bytes().next() {
                if b"+#./;?&".contains(&c) {
                    p.op = c;
                    expr = &expr[1..];
                }
            }
            if expr.is_empty() {
                return Err(format!("uri template {:?}: empty expression", raw));
            }
            for spec in expr.split(',') {
                let mut v = Var { name: spec.to_string(), explode: false, prefix: 0 };
                if let Some(name) = spec.strip_suffix('*') {
                    v.name = name.to_string();
                    v.explode = true;
                } else if let Some((name, n)) = spec.split_once(':') {
                    let l: usize = match n.parse() {
                        Ok(l) if l > 0 && l < 10000 => l,
                        _ => return Err(format!("uri template {:?}: bad prefix in {:?}", raw, spec)),
                    };
                    v.name = name.to_string();
                    v.prefix = l;
                }
                if v.name.is_empty() || v.name.contains(|c| "{}/?#&=+ ".contains(c)) {
                    return Err(format!("uri template {:?}: bad variable {:?}", raw, spec));
                }
                p.vars.push(v);
            }
            parts.push(p);
        }
        Ok(UriTemplate { parts })
    }

    /// The values of the template's variables when `uri` matches it
    /// (variables an optional expression left undefined are absent).
    pub(crate) fn matches(&self, uri: &str) -> Option<Vars> {
        let mut vars = Vars::new();
        if match_parts(&self.parts, uri, &mut vars) {
            Some(vars)
        } else {
            None
        }
    }
}

fn match_parts(parts: &[Part], s: &str, vars: &mut Vars) -> bool {
    let p = match parts.first() {
        Some(p) => p,
        None => return s.is_empty(),
    };
    if p.op == 0 {
        return s.starts_with(&p.literal) && match_parts(&parts[1..], &s[p.literal.len()..], vars);
    }
    // Shortest candidate first (so "{name}{.ext}" splits "readme.md" at the
    // dot); the candidate may not cross a character the expression cannot
    // produce.
    let bytes = s.as_bytes();
    let limit = bytes.iter().position(|&c| stops_expression(p.op, c)).unwrap_or(bytes.len());
    for end in 0..=limit {
        if !s.is_char_boundary(end) {
            continue;
        }
        let mut got = Vars::new();
        if !match_expression(p, &s[..end], &mut got) {
            continue;
        }
        if match_parts(&parts[1..], &s[end..], vars) {
            vars.extend(got);
            return true;
        }
    }
    false
}

/// Whether byte `c` cannot be part of an expansion with operator `op`.
fn stops_expression(op: u8, c: u8) -> bool {
    match op {
        b'+' | b'#' => false,
        b'?' | b'&' => c == b'#',
        b' ' | b'.' | b';' => c == b'/' || c == b'?' || c == b'#',
        b'/' => c == b'?' || c == b'#',
        _ => false,
    }
}

/// Matches `chunk` against the whole expression `p`.
fn match_expression(p: &Part, chunk: &str, vars: &mut Vars) -> bool {
    match p.op {
        b' ' | b'+' => {
            if chunk.is_empty() {
                return false; // a routing variable must have a value
            }
            assign_list(p, chunk, ',', vars)
        }
        b'#' | b'/' | b'.' => {
            if chunk.is_empty() {
                return true; // all variables undefined
            }
            if chunk.as_bytes()[0] != p.op {
                return false;
            }
            let sep = if p.op == b'#' { ',' } else { p.op as char };
            assign_list(p, &chunk[1..], sep, vars)
        }
        b'?' | b'&' | b';' => {
            if chunk.is_empty() {
                return true;
            }
            if chunk.as_bytes()[0] != p.op {
                return false;
            }
            let sep = if p.op == b';' { ';' } else { '&' };
            for pair in chunk[1..].split(sep) {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                let mut known = false;
                for v in &p.vars {
                    if v.name == name {
                        let mut value = value.to_string();
                        if v.explode {
                            if let Some(old) = vars.get(name) {
                                value = format!("{},{}", old, value);
                            }
                        }
                        vars.insert(name.to_string(), percent_decode(&value));
                        known = true;
                    }
                }
                if !known {
                    return false; // a parameter of another expression
                }
            }
            true
        }
        _ => false,
    }
}

/// Splits `chunk` at `sep` over the expression's variables; the last
/// variable takes the rest (leniently, also when it is not exploded:
/// clients do not always percent-encode separators).
fn assign_list(p: &Part, chunk: &str, sep: char, vars: &mut Vars) -> bool {
    let mut rest = chunk;
    let n = p.vars.len();
    for (i, v) in p.vars.iter().enumerate() {
        let last = i == n - 1;
        let value;
        if last {
            value = rest;
        } else {
            match rest.find(sep) {
                None => {
                    value = rest;
                    rest = "";
                }
                Some(j) => {
                    value = &rest[..j];
                    rest = &rest[j + 1..];
                }
            }
        }
        if v.prefix > 0 && percent_decode(value).chars().count() > v.prefix {
            return false;
        }
        if !value.is_empty() || last {
            vars.insert(v.name.clone(), percent_decode(value));
        }
        if rest.is_empty() && !last {
            break;
        }
    }
    true
}

/// Decodes %XX escapes; returns `s` unchanged when an escape is malformed
/// or the result is not UTF-8.
pub(crate) fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        if i + 2 >= b.len() {
            return s.to_string();
        }
        match (unhex(b[i + 1]), unhex(b[i + 2])) {
            (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
            _ => return s.to_string(),
        }
        i += 3;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

fn unhex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t).unwrap().matches(uri).map(|v| v.into_iter().collect())
    }

    fn kv(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn matching() {
        assert_eq!(m("weather://{city}/current", "weather://paris/current"), kv(&[("city", "paris")]));
        assert_eq!(m("weather://{city}/current", "weather://a/b/current"), None);
        assert_eq!(m("weather://{city}/current", "weather:///current"), None);
        assert_eq!(m("file:///{+path}", "file:///a/b%20c.txt"), kv(&[("path", "a/b c.txt")]));
        assert_eq!(m("doc://{name}{.ext}", "doc://readme.md"), kv(&[("ext", "md"), ("name", "readme")]));
        assert_eq!(m("doc://{name}{.ext}", "doc://readme"), kv(&[("name", "readme")]));
        assert_eq!(m("search://x{?q,limit}", "search://x?q=rust&limit=5"), kv(&[("limit", "5"), ("q", "rust")]));
        assert_eq!(m("search://x{?q,limit}", "search://x"), kv(&[]));
        assert_eq!(m("search://x{?q}", "search://x?other=1"), None);
        assert_eq!(m("lang://{code:2}", "lang://en"), kv(&[("code", "en")]));
        assert_eq!(m("lang://{code:2}", "lang://eng"), None);
        assert_eq!(m("p://x{/seg*}", "p://x/a/b"), kv(&[("seg", "a/b")]));
        assert_eq!(m("p://{a,b}", "p://1,2"), kv(&[("a", "1"), ("b", "2")]));
    }

    #[test]
    fn parse_errors() {
        for bad in ["a{", "a}", "a{}", "a{x:0}", "a{x y}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{}", bad);
        }
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b"), "a b");
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("a%zz"), "a%zz");
        assert_eq!(percent_decode("%C3%A9"), "é");
    }
}
