//! Native tests of the whole PDK: a small plugin driven through its exports
//! against the fake kernel.

use crate::testing::{call, set_host_answer, take_host_calls};
use crate::*;

schema! {
    #[derive(Debug)]
    pub struct ShoutArgs {
        /// What to shout.
        pub text: String,
        /// How many times.
        #[schema(minimum = 1, maximum = 5, default = 1)]
        pub times: Option<u32>,
        /// Tags.
        #[schema(enum_values = ["a", "b"], unique_items)]
        pub tags as "tagList": Option<Vec<String>>,
    }
}

schema! {
    pub struct Shout {
        pub text: String,
        pub length: usize,
        pub note: Option<String>,
    }
}

schema_enum! {
    pub enum Mode { Loud = "loud", Quiet = "quiet" }
}

schema! {
    pub struct ModeArgs {
        pub mode: Mode,
    }
}

schema! {
    pub struct Form {
        pub name: String,
        pub age: Option<u32>,
    }
}

fn register() {
    tool("shout", "Upper-cases text.", |ctx: &Context, a: ShoutArgs| {
        ctx.progress(1.0, 2.0, "half");
        ctx.log(Level::Info, "shouting", Some(json!({"n": a.times})));
        let s = format!("{}! ", a.text.to_uppercase()).repeat(a.times.unwrap_or(1) as usize);
        Ok(Shout { length: s.len(), text: s, note: None })
    })
    .title("Shout")
    .read_only()
    .idempotent()
    .open_world(false);
    tool("plain", "Text result.", |_: &Context, _: NoArgs| Ok("plain text"));
    tool("fails", "Tool error.", |_: &Context, _: NoArgs| -> Result<String> { bail!("it broke: {}", 42) });
    tool("protocol", "Protocol error.", |_: &Context, _: NoArgs| -> Result<String> {
        Err(Error::invalid_params("bad request"))
    });
    tool("numbers", "Wrapped structured output.", |_: &Context, _: NoArgs| Ok(Json(vec![1, 2, 3])));
    tool("mode", "Enum argument.", |_: &Context, a: ModeArgs| Ok(a.mode.as_str().to_string()));
    tool("sample", "Uses sampling.", |ctx: &Context, _: NoArgs| {
        let r = ctx.create_message(&CreateMessageParams {
            messages: vec![SamplingMessage::user("hi")],
            max_tokens: 10,
            ..CreateMessageParams::default()
        })?;
        Ok(r.text())
    });
    tool("who", "Names the caller.", |ctx: &Context, _: NoArgs| {
        Ok(format!(
            "{} {} {} {} {}",
            ctx.protocol_version,
            ctx.subject,
            ctx.has_scope("notes:write"),
            ctx.client_can(&["sampling", "tools"]),
            ctx.client_can(&["elicitation"])
        ))
    });
    tool("batch", "Asks two questions at once.", |ctx: &Context, _: NoArgs| {
        let answers = ctx.request_input(&json!({
            "user_name": {"method": "elicitation/create", "params": {"message": "Name?"}},
            "client_roots": {"method": "roots/list"}
        }))?;
        Ok(format!("{} answers", answers.len()))
    });
    tool("ask", "Uses elicitation.", |ctx: &Context, _: NoArgs| match ctx.elicit_as::<Form>("Who?")? {
        Elicited::Accepted(f) => Ok(format!("{} {:?}", f.name, f.age)),
        Elicited::Declined => Ok("declined".to_string()),
        Elicited::Cancelled => Ok("cancelled".to_string()),
    });
    prompt(
        "summarise",
        "Summarise a text.",
        vec![PromptArgument::required("text", "Text"), PromptArgument::optional("length", "How long")],
        |_: &Context, args: &Args| {
            Ok(messages(vec![user_message(format!(
                "Summarise in a {} paragraph: {}",
                args.get("length").map(String::as_str).unwrap_or("short"),
                args["text"]
            ))]))
        },
    )
    .title("Summarise");
    complete_prompt_arg("summarise", "length", complete_from(&["short", "medium", "long"]));
    resource(Resource::new("config://app", "app config").mime_type("application/json"), |_: &Context, uri: &str| {
        Ok(text_resource(uri, "", r#"{"debug":false}"#))
    });
    resource_template(
        ResourceTemplate::new("weather://{city}/current", "weather").mime_type("text/plain"),
        |_: &Context, uri: &str, vars: &Vars| {
            if vars["city"] == "atlantis" {
                return Err(Error::resource_not_found(uri));
            }
            if vars["city"] == "nowhere" {
                return Err(std::io::Error::new(std::io::ErrorKind::NotFound, "gone").into());
            }
            Ok(ReadResourceResult {
                contents: vec![ResourceContents {
                    text: Some(format!("Sunny in {}", vars["city"])),
                    ..Default::default()
                }],
                meta: None,
            })
        },
    );
    complete_template_var("weather://{city}/current", "city", |_: &Context, v: &str, _: &Args| {
        filter_prefix(&(0..150).map(|i| format!("city{}", i)).collect::<Vec<_>>(), v)
    });
    resource_lister(|_: &Context| Ok(vec![Resource::new("weather://paris/current", "")]));
}

crate::plugin!(register);

fn req(request: Value) -> String {
    json!({"request": request, "context": {"id": 7, "_meta": {"progressToken": "tok"}}}).to_string()
}

#[test]
fn lists_tools_with_schemas() {
    let out = call(list_tools, "{}").json();
    let tools = out["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 10);
    let shout = &tools[0];
    assert_eq!(shout["name"], "shout");
    assert_eq!(shout["title"], "Shout");
    assert_eq!(
        shout["inputSchema"],
        json!({"type":"object","properties":{
            "text":{"type":"string","description":"What to shout."},
            "times":{"type":"integer","description":"How many times.","default":1,"minimum":1,"maximum":5},
            "tagList":{"type":"array","description":"Tags.","items":{"type":"string","enum":["a","b"]},"uniqueItems":true}},
         "required":["text"]})
    );
    assert_eq!(
        shout["outputSchema"],
        json!({"type":"object","properties":{
            "text":{"type":"string"},"length":{"type":"integer","minimum":0},"note":{"type":["string","null"]}},
         "required":["text","length"]})
    );
    assert_eq!(shout["annotations"], json!({"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}));
    let plain = &tools[1];
    assert_eq!(plain["inputSchema"], json!({"type":"object","additionalProperties":false}));
    assert!(plain.get("outputSchema").is_none());
    assert_eq!(tools[4]["outputSchema"]["properties"]["result"]["type"], "array");
    assert_eq!(tools[5]["inputSchema"]["properties"]["mode"], json!({"type":"string","enum":["loud","quiet"]}));
}

#[test]
fn calls_tools() {
    take_host_calls();
    let out = call(call_tool, &req(json!({"name":"shout","arguments":{"text":"hi","times":2}}))).json();
    assert_eq!(out["structuredContent"], json!({"text":"HI! HI! ","length":8,"note":null}));
    assert_eq!(out["content"][0]["text"], r#"{"text":"HI! HI! ","length":8,"note":null}"#);
    let calls = take_host_calls();
    assert_eq!(calls[0].0, "notify_progress");
    assert_eq!(
        serde_json::from_str::<Value>(&calls[0].1).unwrap(),
        json!({"progressToken":"tok","progress":1.0,"total":2.0,"message":"half"})
    );
    assert_eq!(calls[1].0, "notify_logging_message");
    assert_eq!(
        serde_json::from_str::<Value>(&calls[1].1).unwrap(),
        json!({"level":"info","data":{"message":"shouting","data":{"n":2}}})
    );

    let out = call(call_tool, &req(json!({"name":"plain"}))).json();
    assert_eq!(out, json!({"content":[{"type":"text","text":"plain text"}]}));
    let out = call(call_tool, &req(json!({"name":"fails","arguments":{}}))).json();
    assert_eq!(out, json!({"content":[{"type":"text","text":"it broke: 42"}],"isError":true}));
    let out = call(call_tool, &req(json!({"name":"numbers"}))).json();
    assert_eq!(out["structuredContent"], json!({"result":[1,2,3]}));
    let out = call(call_tool, &req(json!({"name":"mode","arguments":{"mode":"quiet"}}))).json();
    assert_eq!(out["content"][0]["text"], "quiet");
}

#[test]
fn rejects_bad_arguments_as_tool_errors() {
    for (args, msg) in [
        (json!({}), r#"invalid arguments: missing required argument "text""#),
        (json!({"text":"a","times":9}), r#"invalid arguments: "times": must be <= 5"#),
        (json!({"text":"a","tagList":["c"]}), r#"invalid arguments: "tagList[0]": must be one of "a", "b""#),
        (json!({"text":5}), r#"invalid arguments: "text": must be a string, not an integer"#),
    ] {
        let out = call(call_tool, &req(json!({"name":"shout","arguments":args}))).json();
        assert_eq!(out["isError"], true);
        assert_eq!(out["content"][0]["text"], msg);
    }
    let out = call(call_tool, &req(json!({"name":"plain","arguments":{"x":1}}))).json();
    assert_eq!(out["content"][0]["text"], r#"invalid arguments: arguments: unexpected property "x""#);
    let out = call(call_tool, &req(json!({"name":"mode","arguments":{"mode":"meh"}}))).json();
    assert_eq!(out["content"][0]["text"], r#"invalid arguments: "mode": must be one of "loud", "quiet""#);
}

/// Arguments the host validated against the listed inputSchema (as mcphost
/// does, saying so in the context) are only decoded: the schema's bounds are
/// not checked again, in WebAssembly, at every call; decoding still fails
/// on a type the struct cannot hold.
#[test]
fn trusts_arguments_the_host_validated() {
    let validated = |args: Value| {
        json!({"request": {"name": "shout", "arguments": args},
               "context": {"id": 8, "_meta": {}, "argumentsValidated": true}})
        .to_string()
    };
    let out = call(call_tool, &validated(json!({"text":"a","times":6}))).json();
    assert_eq!(out["structuredContent"], json!({"text":"A! A! A! A! A! A! ","length":18,"note":null}));
    let out = call(call_tool, &validated(json!({"text":5}))).json();
    assert_eq!(out["isError"], true);
    assert!(out["content"][0]["text"].as_str().unwrap().starts_with("invalid arguments"), "{}", out);
}

#[test]
fn protocol_errors() {
    let out = call(call_tool, &req(json!({"name":"nope"})));
    assert_eq!(out.status, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&out.error).unwrap(),
        json!({"code":-32602,"message":"unknown tool: \"nope\""})
    );
    let out = call(call_tool, &req(json!({"name":"protocol"})));
    assert_eq!(serde_json::from_str::<Value>(&out.error).unwrap(), json!({"code":-32602,"message":"bad request"}));
    let out = call(call_tool, "not json");
    assert!(out.error.contains("-32602") && out.error.contains("invalid input"), "{}", out.error);
}

#[test]
fn host_functions_with_results() {
    let out = call(call_tool, &req(json!({"name":"sample"}))).json();
    assert_eq!(out["isError"], true);
    assert_eq!(out["content"][0]["text"], "create_message: host function create_message is not granted");
    set_host_answer("create_message", r#"{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}"#);
    let out = call(call_tool, &req(json!({"name":"sample"}))).json();
    assert_eq!(out["content"][0]["text"], "hello");
    set_host_answer(
        "create_message",
        r#"{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}"#,
    );
    let out = call(call_tool, &req(json!({"name":"sample"}))).json();
    assert_eq!(out["content"][0]["text"], "ab");

    take_host_calls();
    set_host_answer("create_elicitation", r#"{"action":"accept","content":{"name":"Ada","age":36}}"#);
    let out = call(call_tool, &req(json!({"name":"ask"}))).json();
    assert_eq!(out["content"][0]["text"], "Ada Some(36)");
    let calls = take_host_calls();
    assert_eq!(
        serde_json::from_str::<Value>(&calls[0].1).unwrap(),
        json!({"message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name"]}})
    );
    set_host_answer("create_elicitation", r#"{"action":"decline"}"#);
    let out = call(call_tool, &req(json!({"name":"ask"}))).json();
    assert_eq!(out["content"][0]["text"], "declined");
}

#[test]
fn prompts() {
    let out = call(list_prompts, "").json();
    assert_eq!(out["prompts"][0]["name"], "summarise");
    assert_eq!(out["prompts"][0]["arguments"][0], json!({"name":"text","description":"Text","required":true}));
    let out = call(get_prompt, &req(json!({"name":"summarise","arguments":{"text":"abc"}}))).json();
    assert_eq!(out["description"], "Summarise a text.");
    assert_eq!(
        out["messages"][0],
        json!({"role":"user","content":{"type":"text","text":"Summarise in a short paragraph: abc"}})
    );
    let out = call(get_prompt, &req(json!({"name":"summarise","arguments":{"text":"  "}})));
    assert_eq!(
        serde_json::from_str::<Value>(&out.error).unwrap(),
        json!({"code":-32602,"message":"prompt \"summarise\": missing required argument \"text\""})
    );
    let out = call(get_prompt, &req(json!({"name":"zzz"})));
    assert!(out.error.contains("unknown prompt"));
}

#[test]
fn resources() {
    let out = call(list_resources, "{}").json();
    assert_eq!(
        out["resources"],
        json!([{"uri":"config://app","name":"app config","mimeType":"application/json"},
               {"uri":"weather://paris/current","name":"weather://paris/current"}])
    );
    let out = call(list_resource_templates, "{}").json();
    assert_eq!(
        out["resourceTemplates"][0],
        json!({"uriTemplate":"weather://{city}/current","name":"weather","mimeType":"text/plain"})
    );
    let out = call(read_resource, &req(json!({"uri":"config://app"}))).json();
    assert_eq!(
        out,
        json!({"contents":[{"uri":"config://app","mimeType":"application/json","text":"{\"debug\":false}"}]})
    );
    let out = call(read_resource, &req(json!({"uri":"weather://oslo/current"}))).json();
    assert_eq!(
        out,
        json!({"contents":[{"uri":"weather://oslo/current","mimeType":"text/plain","text":"Sunny in oslo"}]})
    );
    for uri in ["weather://atlantis/current", "weather://nowhere/current", "nope://x"] {
        let out = call(read_resource, &req(json!({ "uri": uri })));
        assert_eq!(
            serde_json::from_str::<Value>(&out.error).unwrap(),
            json!({"code":-32002,"message":format!("resource not found: {}", uri),"data":{"uri":uri}})
        );
    }
}

#[test]
fn completions() {
    let out = call(
        complete,
        &req(json!({"ref":{"type":"prompt","name":"summarise"},"argument":{"name":"length","value":"M"}})),
    )
    .json();
    assert_eq!(out, json!({"completion":{"values":["medium"],"total":1}}));
    let out = call(
        complete,
        &req(json!({"ref":{"type":"ref/resource","uri":"weather://{city}/current"},"argument":{"name":"city","value":"c"}})),
    )
    .json();
    assert_eq!(out["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(out["completion"]["total"], 150);
    assert_eq!(out["completion"]["hasMore"], true);
    let out = call(complete, &req(json!({"ref":{"type":"prompt","name":"x"},"argument":{"name":"a","value":""}})));
    assert!(out.error.contains("unknown prompt"));
}

#[test]
fn doc_text_joins_lines() {
    assert_eq!(__private::doc_text(&[" One", " two.", "", " Three."]), Some("One two.\nThree.".to_string()));
    assert_eq!(__private::doc_text(&[]), None);
}

/// Sets what the fake kernel's `http_request` answers.
fn set_http_answer(status: i32, body: &str) {
    crate::kernel::sys::STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.http_status = status;
        s.http_body = body.to_string();
    });
}

#[test]
fn fetch_failures_are_errors() {
    set_http_answer(200, "pong");
    let resp = fetch(&HttpRequest::get("https://api.example.com/").header("accept", "text/plain")).unwrap();
    assert_eq!((resp.status, resp.body.as_slice()), (200, b"pong".as_slice()));
    let sent = crate::kernel::sys::STATE.with(|s| s.borrow().http_request.clone());
    assert_eq!(
        serde_json::from_str::<Value>(&sent).unwrap(),
        json!({"method":"GET","url":"https://api.example.com/","headers":{"accept":"text/plain"}})
    );

    // mcphost answers a request that failed with status 0 and why as the
    // body (the plugin exports mcphost_http_errors): an error to handle.
    let refused = r#"HTTP request to 'https://api.example.org/' is not allowed: host api.example.org is not in the allowed_hosts of plugin p (add "api.example.org" to allowed_hosts in [plugins.p])"#;
    set_http_answer(0, refused);
    let err = fetch(&HttpRequest::get("https://api.example.org/")).unwrap_err();
    assert_eq!(err.message(), refused);

    set_http_answer(0, "");
    let err = fetch(&HttpRequest::get("https://api.example.com/")).unwrap_err();
    assert_eq!(err.message(), "fetch: no response from https://api.example.com/");
}

#[test]
fn caller_and_request_input() {
    let input = json!({
        "request": {"name": "who"},
        "context": {"id": 1, "protocolVersion": "2026-07-28", "clientCapabilities": {"sampling": {"tools": {}}},
                    "subject": "alice", "scopes": ["mcp", "notes:write"]}
    })
    .to_string();
    let out = call(call_tool, &input).json();
    assert_eq!(out["content"][0]["text"], "2026-07-28 alice true true false");

    take_host_calls();
    set_host_answer(
        "request_input",
        r#"{"inputResponses":{"user_name":{"action":"accept","content":{}},"client_roots":{"roots":[]}}}"#,
    );
    let out = call(call_tool, &req(json!({"name":"batch"}))).json();
    assert_eq!(out["content"][0]["text"], "2 answers");
    let calls = take_host_calls();
    assert_eq!(calls[0].0, "request_input");
    assert_eq!(
        serde_json::from_str::<Value>(&calls[0].1).unwrap()["inputRequests"]["client_roots"],
        json!({"method": "roots/list"})
    );
}
