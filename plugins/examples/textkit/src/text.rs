//! The text algorithms of textkit, free of any plugin concern so that they
//! can be tested natively (`cargo test`).

use std::collections::HashMap;

/// Common English words `word_frequencies` can leave out.
pub const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "because", "been", "but", "by",
    "can", "could", "do", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into",
    "is", "it", "its", "just", "me", "more", "my", "no", "not", "of", "on", "one", "or", "our", "out", "she", "so",
    "some", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "up", "us", "was",
    "we", "were", "what", "when", "which", "who", "will", "with", "would", "you", "your",
];

/// An ASCII approximation of a Latin letter with diacritics ("é" → "e",
/// "ß" → "ss"); `None` for characters it does not know.
fn fold(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'č' | 'ĉ' | 'ċ' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĵ' => "j",
        'ķ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' => "t",
        'þ' => "th",
        'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    })
}

/// A URL slug of `text`: lower-case ASCII letters and digits (accented
/// Latin letters folded), runs of anything else replaced by one
/// `separator`, none at either end. With `max_len` > 0 the slug is cut to at
/// most that many bytes, at a separator when there is one.
pub fn slugify(text: &str, separator: &str, max_len: usize) -> String {
    let mut out = String::new();
    let mut pending = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        let piece: String = if c.is_ascii_alphanumeric() {
            c.to_string()
        } else if let Some(f) = fold(c) {
            f.to_string()
        } else {
            pending = !out.is_empty();
            continue;
        };
        if pending {
            out.push_str(separator);
            pending = false;
        }
        out.push_str(&piece);
    }
    if max_len > 0 && out.len() > max_len {
        out.truncate(max_len);
        if !separator.is_empty() {
            // Cut at the last separator, or drop a trailing partial one.
            if let Some(i) = out.rfind(separator) {
                if i > 0 {
                    out.truncate(i);
                }
            }
        }
        while !separator.is_empty() && out.ends_with(separator) {
            out.truncate(out.len() - separator.len());
        }
    }
    out
}

/// The words of `text`: runs of letters and digits, with inner apostrophes
/// ("don't"), lower-cased.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')) {
        let w = raw.trim_matches(|c| c == '\'' || c == '’');
        if !w.is_empty() {
            out.push(w.to_lowercase());
        }
    }
    out
}

/// Counts of words: how often each word of at least `min_len` characters
/// occurs, most frequent first (ties alphabetically).
pub struct Frequencies {
    pub total: usize,
    pub counts: Vec<(String, usize)>,
}

/// Counts the words of `text` (see [`words`]), calling `progress(done,
/// total)` with bytes processed after each tenth of the text.
pub fn frequencies(
    text: &str,
    min_len: usize,
    skip_stopwords: bool,
    mut progress: impl FnMut(usize, usize),
) -> Frequencies {
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut total = 0;
    let step = (text.len() / 10).max(1);
    let mut next = step;
    let mut done = 0;
    for line in text.split_inclusive('\n') {
        for w in words(line) {
            if w.chars().count() < min_len || (skip_stopwords && STOPWORDS.binary_search(&w.as_str()).is_ok()) {
                continue;
            }
            total += 1;
            *counts.entry(w).or_insert(0) += 1;
        }
        done += line.len();
        if done >= next && done < text.len() {
            progress(done, text.len());
            next = done + step;
        }
    }
    let mut counts: Vec<(String, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Frequencies { total, counts }
}

/// Wraps `text` greedily at `width` characters, each line starting with
/// `indent` (counted in the width). Paragraphs (separated by blank lines)
/// stay apart; a word longer than the width gets a line of its own.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let room = width.saturating_sub(indent.chars().count()).max(1);
    let mut paragraphs = Vec::new();
    for para in split_paragraphs(text) {
        let mut lines = Vec::new();
        let mut line = String::new();
        let mut len = 0;
        for word in para.split_whitespace() {
            let n = word.chars().count();
            if len > 0 && len + 1 + n > room {
                lines.push(format!("{}{}", indent, line));
                line.clear();
                len = 0;
            }
            if len > 0 {
                line.push(' ');
                len += 1;
            }
            line.push_str(word);
            len += n;
        }
        if len > 0 {
            lines.push(format!("{}{}", indent, line));
        }
        paragraphs.push(lines.join("\n"));
    }
    paragraphs.join("\n\n")
}

fn split_paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !cur.trim().is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.clear();
        } else {
            cur.push_str(line);
            cur.push('\n');
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// Case styles of [`convert_case`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Snake,
    Kebab,
    Camel,
    Pascal,
    Constant,
    Title,
    Lower,
    Upper,
}

/// Splits an identifier or phrase into words: at anything that is not a
/// letter or digit, and at lower-to-upper case changes ("parseHTTPRequest"
/// → parse, HTTP, Request).
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = chunk.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).map_or(false, |c| c.is_lowercase());
            if (prev.is_lowercase() || prev.is_numeric()) && cur.is_uppercase()
                || prev.is_uppercase() && cur.is_uppercase() && next_lower
            {
                out.push(chars[start..i].iter().collect());
                start = i;
            }
        }
        if start < chars.len() {
            out.push(chars[start..].iter().collect());
        }
    }
    out
}

fn capitalise(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c.flat_map(char::to_lowercase)).collect(),
        None => String::new(),
    }
}

/// `text` in the given case style.
pub fn convert_case(text: &str, style: Style) -> String {
    let words = split_words(text);
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    match style {
        Style::Snake => lower.join("_"),
        Style::Kebab => lower.join("-"),
        Style::Constant => words.iter().map(|w| w.to_uppercase()).collect::<Vec<_>>().join("_"),
        Style::Camel => lower.iter().enumerate().map(|(i, w)| if i == 0 { w.clone() } else { capitalise(w) }).collect(),
        Style::Pascal => lower.iter().map(|w| capitalise(w)).collect(),
        Style::Title => lower.iter().map(|w| capitalise(w)).collect::<Vec<_>>().join(" "),
        Style::Lower => text.to_lowercase(),
        Style::Upper => text.to_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        let mut sorted = STOPWORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOPWORDS);
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("Héllo, Wörld! Rust & Go", "-", 0), "hello-world-rust-go");
        assert_eq!(slugify("  --Straße über alles--  ", "_", 0), "strasse_uber_alles");
        assert_eq!(slugify("one two three four", "-", 12), "one-two");
        assert_eq!(slugify("abcdefghij", "-", 4), "abcd");
        assert_eq!(slugify("日本語", "-", 0), "");
    }

    #[test]
    fn word_counts() {
        let mut steps = Vec::new();
        let f = frequencies("The cat and the hat.\nThe cat's hat!\n", 1, false, |d, t| steps.push((d, t)));
        assert_eq!(f.total, 8);
        assert_eq!(f.counts[0], ("the".to_string(), 3));
        assert_eq!(f.counts[1], ("hat".to_string(), 2));
        assert_eq!(steps, vec![(21, 36)]);
        let f = frequencies("The cat and the hat", 1, true, |_, _| {});
        assert_eq!(f.total, 2);
        assert_eq!(words("Don't 'quote' me—ok?"), vec!["don't", "quote", "me", "ok"]);
    }

    #[test]
    fn wrapping() {
        assert_eq!(wrap("aaa bbb ccc ddd", 7, ""), "aaa bbb\nccc ddd");
        assert_eq!(wrap("aaa bbb\n\nccc", 80, "> "), "> aaa bbb\n\n> ccc");
        assert_eq!(wrap("a verylongword b", 5, ""), "a\nverylongword\nb");
    }

    #[test]
    fn cases() {
        assert_eq!(split_words("parseHTTPRequest v2"), vec!["parse", "HTTP", "Request", "v2"]);
        assert_eq!(convert_case("parseHTTPRequest", Style::Snake), "parse_http_request");
        assert_eq!(convert_case("hello big world", Style::Camel), "helloBigWorld");
        assert_eq!(convert_case("hello-big_world", Style::Pascal), "HelloBigWorld");
        assert_eq!(convert_case("helloBigWorld", Style::Constant), "HELLO_BIG_WORLD");
        assert_eq!(convert_case("hello big world", Style::Kebab), "hello-big-world");
        assert_eq!(convert_case("hello big world", Style::Title), "Hello Big World");
    }
}
