//! textkit: an mcphost example plugin written in Rust with mcphost-pdk.
//!
//! Tools: `slugify`, `word_frequencies` (structured output, progress and
//! logging), `wrap`, `convert_case`, `summarize` (sampling through the
//! client); a `proofread` prompt with completion; a `textkit://stopwords`
//! resource and a `textkit://case/{style}/{text}` template.

use mcphost_pdk::*;

mod text;

manifest!(include_str!("../manifest.json"));
plugin!(register);

schema! {
    pub struct SlugifyArgs {
        /// The text to turn into a URL slug.
        pub text: String,
        /// What joins the words.
        #[schema(default = "-", max_length = 3)]
        pub separator: Option<String>,
        /// Cut the slug to at most this many bytes, at a word boundary.
        #[schema(minimum = 1, maximum = 256)]
        pub max_length: Option<u32>,
    }
}

schema! {
    pub struct FrequencyArgs {
        /// The text to count words in.
        pub text: String,
        /// How many of the most frequent words to return.
        #[schema(minimum = 1, maximum = 100, default = 10)]
        pub top: Option<u32>,
        /// Ignore words shorter than this many characters.
        #[schema(minimum = 1, maximum = 50, default = 1)]
        pub min_length: Option<u32>,
        /// Leave out common English words ("the", "and", ...).
        #[schema(default = false)]
        pub ignore_stopwords: Option<bool>,
    }
}

schema! {
    pub struct WordCount {
        pub word: String,
        pub count: u64,
        /// Share of all counted words, 0 to 1.
        pub share: f64,
    }
}

schema! {
    pub struct WordFrequencies {
        /// Words counted.
        pub total_words: u64,
        /// Distinct words among them.
        pub unique_words: u64,
        /// The most frequent words, most frequent first.
        pub top: Vec<WordCount>,
    }
}

schema! {
    pub struct WrapArgs {
        /// The text to wrap; blank lines separate paragraphs.
        pub text: String,
        /// The maximum line width in characters.
        #[schema(minimum = 10, maximum = 200, default = 80)]
        pub width: Option<u32>,
        /// A prefix for every line, such as "> " (counted in the width).
        #[schema(max_length = 20)]
        pub indent: Option<String>,
    }
}

schema_enum! {
    /// A case style.
    pub enum Case {
        Snake = "snake",
        Kebab = "kebab",
        Camel = "camel",
        Pascal = "pascal",
        Constant = "constant",
        Title = "title",
        Lower = "lower",
        Upper = "upper",
    }
}

impl Case {
    fn style(self) -> text::Style {
        match self {
            Case::Snake => text::Style::Snake,
            Case::Kebab => text::Style::Kebab,
            Case::Camel => text::Style::Camel,
            Case::Pascal => text::Style::Pascal,
            Case::Constant => text::Style::Constant,
            Case::Title => text::Style::Title,
            Case::Lower => text::Style::Lower,
            Case::Upper => text::Style::Upper,
        }
    }
}

schema! {
    pub struct CaseArgs {
        /// The identifier or phrase to convert.
        pub text: String,
        /// The case style to convert to.
        pub style: Case,
    }
}

schema! {
    pub struct SummarizeArgs {
        /// The text to summarise.
        #[schema(min_length = 1)]
        pub text: String,
        /// About how many sentences the summary should have.
        #[schema(minimum = 1, maximum = 10, default = 3)]
        pub sentences: Option<u32>,
    }
}

fn register() {
    tool(
        "slugify",
        "Turns text into a URL slug: lower-case ASCII words joined by a separator.",
        |_: &Context, a: SlugifyArgs| {
            let sep = a.separator.unwrap_or_else(|| "-".to_string());
            Ok(text::slugify(&a.text, &sep, a.max_length.unwrap_or(0) as usize))
        },
    )
    .title("Slugify")
    .read_only()
    .idempotent()
    .open_world(false);

    tool(
        "word_frequencies",
        "Counts the words of a text and returns the most frequent ones. Reports progress on long texts.",
        word_frequencies,
    )
    .title("Word frequencies")
    .read_only()
    .idempotent()
    .open_world(false);

    tool("wrap", "Wraps text at a line width, keeping paragraphs.", |_: &Context, a: WrapArgs| {
        Ok(text::wrap(&a.text, a.width.unwrap_or(80) as usize, a.indent.as_deref().unwrap_or("")))
    })
    .title("Wrap text")
    .read_only()
    .idempotent()
    .open_world(false);

    tool(
        "convert_case",
        "Converts an identifier or phrase to snake_case, camelCase, Title Case, ...",
        |_: &Context, a: CaseArgs| Ok(text::convert_case(&a.text, a.style.style())),
    )
    .title("Convert case")
    .read_only()
    .idempotent()
    .open_world(false);

    tool("summarize", "Summarises a text with the client's language model (MCP sampling).", summarize)
        .title("Summarise")
        .read_only();

    prompt(
        "proofread",
        "Asks the model to proofread a text in a given style.",
        vec![
            PromptArgument::required("text", "The text to proofread"),
            PromptArgument::optional("style", "formal, casual or technical (default: keep the text's own)"),
        ],
        |_: &Context, args: &Args| {
            let style = match args.get("style").map(|s| s.trim()).filter(|s| !s.is_empty()) {
                Some(s) => format!(" Make the style {}.", s),
                None => String::new(),
            };
            Ok(messages(vec![user_message(format!(
                "Proofread the text below: fix spelling, grammar and punctuation, and list what you changed.{}\n\n{}",
                style, args["text"]
            ))]))
        },
    )
    .title("Proofread");
    complete_prompt_arg("proofread", "style", complete_from(&["formal", "casual", "technical"]));

    resource(
        Resource::new("textkit://stopwords", "stopwords")
            .title("Stop words")
            .description("The English stop words word_frequencies can ignore, one per line.")
            .mime_type("text/plain"),
        |_: &Context, uri: &str| Ok(text_resource(uri, "", &text::STOPWORDS.join("\n"))),
    );

    resource_template(
        ResourceTemplate::new("textkit://case/{style}/{text}", "case")
            .title("Text in a case style")
            .description(
                "The text converted to the style (snake, kebab, camel, pascal, constant, title, lower, upper).",
            )
            .mime_type("text/plain"),
        |_: &Context, uri: &str, vars: &Vars| {
            let style = match Case::parse(&vars["style"]) {
                Some(s) => s,
                None => return Err(Error::resource_not_found(uri)),
            };
            Ok(text_resource(uri, "", &text::convert_case(&vars["text"], style.style())))
        },
    );
    complete_template_var("textkit://case/{style}/{text}", "style", complete_from(Case::VALUES));
}

fn word_frequencies(ctx: &Context, a: FrequencyArgs) -> Result<WordFrequencies> {
    let top = a.top.unwrap_or(10) as usize;
    let f = text::frequencies(
        &a.text,
        a.min_length.unwrap_or(1) as usize,
        a.ignore_stopwords.unwrap_or(false),
        |done, total| ctx.progress(done as f64, total as f64, &format!("counted {} of {} bytes", done, total)),
    );
    let unique = f.counts.len();
    ctx.log(
        Level::Info,
        &format!("word_frequencies: {} words, {} distinct", f.total, unique),
        Some(json!({ "bytes": a.text.len() })),
    );
    let total = f.total.max(1) as f64;
    Ok(WordFrequencies {
        total_words: f.total as u64,
        unique_words: unique as u64,
        top: f
            .counts
            .into_iter()
            .take(top)
            .map(|(word, count)| WordCount {
                word,
                count: count as u64,
                share: (count as f64 / total * 1000.0).round() / 1000.0,
            })
            .collect(),
    })
}

fn summarize(ctx: &Context, a: SummarizeArgs) -> Result<String> {
    let n = a.sentences.unwrap_or(3);
    ctx.log(Level::Debug, "summarize: asking the client's model", None);
    let reply = ctx.create_message(&CreateMessageParams {
        messages: vec![SamplingMessage::user(format!(
            "Summarise the following text in about {} sentence{}:\n\n{}",
            n,
            if n == 1 { "" } else { "s" },
            a.text
        ))],
        system_prompt: Some("You write short, faithful summaries.".to_string()),
        max_tokens: 100 * n,
        ..CreateMessageParams::default()
    })?;
    let summary = reply.text();
    if summary.trim().is_empty() {
        bail!("the model ({}) returned no text", reply.model);
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcphost_pdk::testing::{call, set_host_answer, take_host_calls};

    fn call_tool_json(name: &str, args: Value) -> Value {
        let input = json!({"request": {"name": name, "arguments": args}, "context": {"_meta": {"progressToken": 1}}});
        call(super::call_tool, &input.to_string()).json()
    }

    #[test]
    fn tools_through_the_exports() {
        let out = call_tool_json("slugify", json!({"text": "Hello, World!"}));
        assert_eq!(out["content"][0]["text"], "hello-world");
        let text = "one two two three three three\n".repeat(20);
        let out = call_tool_json("word_frequencies", json!({"text": text, "top": 2}));
        assert_eq!(
            out["structuredContent"],
            json!({"total_words": 120, "unique_words": 3, "top": [
                {"word": "three", "count": 60, "share": 0.5},
                {"word": "two", "count": 40, "share": 0.333}]})
        );
        let calls = take_host_calls();
        assert!(calls.iter().filter(|c| c.0 == "notify_progress").count() >= 5, "{:?}", calls);
        assert_eq!(calls.last().unwrap().0, "notify_logging_message");
        let out = call_tool_json("convert_case", json!({"text": "helloWorld", "style": "snake"}));
        assert_eq!(out["content"][0]["text"], "hello_world");
        set_host_answer(
            "create_message",
            r#"{"role":"assistant","content":{"type":"text","text":"Short."},"model":"m"}"#,
        );
        let out = call_tool_json("summarize", json!({"text": "Long text."}));
        assert_eq!(out["content"][0]["text"], "Short.");
    }

    #[test]
    fn template_reads() {
        let input = json!({"request": {"uri": "textkit://case/kebab/Hello%20Big%20World"}});
        let out = call(super::read_resource, &input.to_string()).json();
        assert_eq!(out["contents"][0]["text"], "hello-big-world");
        let input = json!({"request": {"uri": "textkit://case/sideways/x"}});
        assert!(call(super::read_resource, &input.to_string()).error.contains("-32002"));
    }
}
