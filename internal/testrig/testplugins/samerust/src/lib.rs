//! samerust is the Rust version of the wordcount test plugin, which
//! internal/testrig/testplugins/samego (Go) and internal/testrig/testplugins/samejs
//! (JavaScript) implement identically: one tool, `wordcount`, taking
//! `{"text": string}` and returning `{"words": n, "lines": n, "chars": n}`
//! as structured output. See samego/main.go for the counting rules.

use mcphost_pdk::*;

manifest!(include_str!("../manifest.json"));
plugin!(register);

schema! {
    pub struct WordcountArgs {
        /// The text to count in.
        pub text: String,
    }
}

schema! {
    /// The structured output of wordcount.
    pub struct Counts {
        /// Runs of non-white-space characters.
        pub words: u64,
        /// Lines; a final newline does not start another.
        pub lines: u64,
        /// Unicode code points.
        pub chars: u64,
    }
}

/// Applies the rules: `char::is_whitespace` is the White_Space property.
fn count(s: &str) -> Counts {
    let mut c = Counts { words: 0, lines: 0, chars: 0 };
    let mut in_word = false;
    for ch in s.chars() {
        c.chars += 1;
        if ch == '\n' {
            c.lines += 1;
        }
        if ch.is_whitespace() {
            in_word = false;
        } else if !in_word {
            in_word = true;
            c.words += 1;
        }
    }
    if !s.is_empty() && !s.ends_with('\n') {
        c.lines += 1;
    }
    c
}

fn register() {
    tool("wordcount", "Counts the words, lines and characters of a text.", |_ctx: &Context, a: WordcountArgs| {
        Ok(count(&a.text))
    })
    .read_only()
    .idempotent()
    .open_world(false);
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts() {
        let c = count("héllo  wörld\n\u{3000}x\n");
        assert_eq!((c.words, c.lines, c.chars), (3, 2, 16));
        let c = count("");
        assert_eq!((c.words, c.lines, c.chars), (0, 0, 0));
    }
}
