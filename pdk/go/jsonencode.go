package pdk

import (
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
)

// For the same reason as unmarshal (see jsondecode.go) the PDK writes tool
// results and resource contents, which may carry large texts, itself:
// encoding/json would escape their strings a byte at a time, then scan the
// output of abi.Content's MarshalJSON again to compact it. The output is
// byte for byte what json.Marshal writes; small parts and values of
// arbitrary types are still encoded by encoding/json.

// marshal is json.Marshal(v).
func marshal(v any) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	switch r := v.(type) {
	case *abi.CallToolResult:
		if r != nil {
			b, err = appendCallToolResult(make([]byte, 0, callToolResultSize(r)), r)
		}
	case *abi.ReadResourceResult:
		if r != nil {
			b, err = appendReadResourceResult(nil, r)
		}
	}
	if b == nil || err != nil {
		return json.Marshal(v) // also gives encoding/json's errors
	}
	return b, nil
}

// callToolResultSize estimates the length of r as JSON, so that its
// encoding is written in one buffer: in a TinyGo plugin the buffers an
// append outgrows are garbage, and garbage is what makes its collector run.
// Text is counted with a quarter more for escapes (a structured result's
// text is JSON, whose quotes are escaped).
func callToolResultSize(r *abi.CallToolResult) int {
	n := 64
	for i := range r.Content {
		c := &r.Content[i]
		n += 32 + len(c.Text) + len(c.Text)/4 + len(c.Data) + len(c.MimeType) + len(c.URI) + len(c.Name)
	}
	if raw, ok := r.StructuredContent.(json.RawMessage); ok {
		n += 24 + len(raw)
	}
	return n
}

func appendCallToolResult(b []byte, r *abi.CallToolResult) ([]byte, error) {
	b = append(b, `{"content":`...)
	if r.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Content {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendContent(b, &r.Content[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	var err error
	if r.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if raw, ok := r.StructuredContent.(json.RawMessage); ok && isCompact(raw) {
			b = append(b, raw...)
		} else if b, err = appendMarshal(b, r.StructuredContent); err != nil {
			return nil, err
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if b, err = appendMeta(b, r.Meta); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendContent writes c as abi.Content's MarshalJSON does.
func appendContent(b []byte, c *abi.Content) ([]byte, error) {
	b = append(b, `{"type":`...)
	b = appendString(b, c.Type)
	b = appendField(b, "text", c.Text)
	b = appendField(b, "data", c.Data)
	b = appendField(b, "mimeType", c.MimeType)
	b = appendField(b, "uri", c.URI)
	b = appendField(b, "name", c.Name)
	b = appendField(b, "title", c.Title)
	b = appendField(b, "description", c.Description)
	if c.Size != nil {
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, *c.Size, 10)
	}
	var err error
	if len(c.Icons) > 0 {
		b = append(b, `,"icons":`...)
		if b, err = appendMarshal(b, c.Icons); err != nil {
			return nil, err
		}
	}
	if c.Resource != nil {
		b = append(b, `,"resource":`...)
		if b, err = appendResourceContents(b, c.Resource); err != nil {
			return nil, err
		}
	}
	if c.Annotations != nil {
		b = append(b, `,"annotations":`...)
		if b, err = appendMarshal(b, c.Annotations); err != nil {
			return nil, err
		}
	}
	if b, err = appendMeta(b, c.Meta); err != nil {
		return nil, err
	}
	if c.Type == abi.ContentText && c.Text == "" {
		b = append(b, `,"text":""`...) // MCP requires text; MarshalJSON writes it last
	}
	return append(b, '}'), nil
}

func appendReadResourceResult(b []byte, r *abi.ReadResourceResult) ([]byte, error) {
	b = append(b, `{"contents":`...)
	if r.Contents == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Contents {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendResourceContents(b, &r.Contents[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b, err := appendMeta(b, r.Meta)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendResourceContents writes r as abi.ResourceContents' MarshalJSON
// does.
func appendResourceContents(b []byte, r *abi.ResourceContents) ([]byte, error) {
	b = append(b, `{"uri":`...)
	b = appendString(b, r.URI)
	b = appendField(b, "mimeType", r.MimeType)
	b = appendField(b, "text", r.Text)
	b = appendField(b, "blob", r.Blob)
	b, err := appendMeta(b, r.Meta)
	if err != nil {
		return nil, err
	}
	if r.Text == "" && r.Blob == "" {
		b = append(b, `,"text":""`...) // written last, as MarshalJSON does
	}
	return append(b, '}'), nil
}

// appendField writes the string field key unless s is empty (omitempty).
func appendField(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, s)
}

// appendMeta writes the _meta field unless meta is empty (omitempty).
func appendMeta(b []byte, meta abi.Meta) ([]byte, error) {
	if len(meta) == 0 {
		return b, nil
	}
	return appendMarshal(append(b, `,"_meta":`...), meta)
}

func appendMarshal(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// isCompact reports whether raw is valid JSON that json.Marshal writes
// unchanged: without white space between tokens and without the characters
// it escapes for HTML (<, >, &, U+2028 and U+2029). json.Marshal writes such
// JSON, so structured results made by the PDK need no new encoding.
func isCompact(raw []byte) bool {
	d := decoder{data: raw}
	if !d.skip() || d.off != len(raw) || d.spaced {
		return false
	}
	for i := 0; i < len(raw); {
		if i+8 <= len(raw) {
			x := load64(raw, i)
			if hasByte(x, '<')|hasByte(x, '>')|hasByte(x, '&')|hasByte(x, 0xE2) == 0 {
				i += 8
				continue
			}
		}
		switch c := raw[i]; {
		case c == '<', c == '>', c == '&':
			return false
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			return false
		}
		i++
	}
	return true
}

// appendString writes s as a JSON string as encoding/json does, escaping
// HTML characters, finding the bytes to escape eight at a time.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; ; {
		// Skip to the next control, quote, backslash, HTML or non-ASCII
		// byte.
		for ; i+8 <= len(s); i += 8 {
			x := load64(s, i)
			m := hasLess(x, 0x20) | hasByte(x, '"') | hasByte(x, '\\') |
				hasByte(x, '<') | hasByte(x, '>') | hasByte(x, '&') | x&msb
			if m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
		}
		for ; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
				break
			}
		}
		if i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			start = i + size
		case c == '\u2028' || c == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[c&0xF])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
