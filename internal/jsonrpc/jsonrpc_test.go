package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeNamesTheFault(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		code int // 0: no error
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}`, 0}, // a notification's bad params are its handler's
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0},
		{`{"jsonrpc":`, CodeParseError},
		{`[1,2`, CodeParseError},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, CodeInvalidParams},
	} {
		_, err := Decode([]byte(tc.raw))
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%s: %v", tc.raw, err)
		case tc.code != 0 && (err == nil || err.Code != tc.code):
			t.Errorf("%s: got %v, want code %d", tc.raw, err, tc.code)
		}
	}
}

func TestAnUnreadableIDIsAnsweredWithNull(t *testing.T) {
	m, err := Decode([]byte(`{"jsonrpc":"2.0","id":true,"method":"ping"}`))
	if err == nil || string(m.ID) != "null" {
		t.Fatalf("got %v, id %s", err, m.ID)
	}
	if got := string(EncodeResponse(m.ID, nil, err)); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string or an integer"}}` {
		t.Fatal(got)
	}
}

func TestResponseIDReadsOnlyResponses(t *testing.T) {
	for raw, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`:                "7",
		`{"jsonrpc":"2.0","id":"x","error":{"code":1}}`:       `"x"`,
		`{"jsonrpc":"2.0","id":7,"method":"sampling/create"}`: "",
		`{"jsonrpc":"2.0","method":"notifications/progress"}`: "",
		`not json`: "",
	} {
		id, ok := ResponseID([]byte(raw))
		if ok != (want != "") || string(id) != want {
			t.Errorf("%s: got %s %v, want %s", raw, id, ok, want)
		}
	}
}

func TestEncodedMessagesRoundTrip(t *testing.T) {
	resp := EncodeResponse(json.RawMessage(`"r1"`), map[string]int{"n": 1}, nil)
	m, err := Decode(resp)
	if err != nil || !m.IsResponse() || string(m.Result) != `{"n":1}` {
		t.Fatalf("%s: %v", resp, err)
	}
	note := EncodeNotification("notifications/message", map[string]string{"level": "info"})
	if m, err := Decode(note); err != nil || !m.IsNotification() || m.Method != "notifications/message" {
		t.Fatalf("%s: %v", note, err)
	}
	if bad := EncodeResponse(json.RawMessage(`1`), func() {}, nil); !json.Valid(bad) {
		t.Fatalf("an unencodable result gave invalid JSON: %s", bad)
	}
}

// referenceValidID is what the id check must agree with: the id decoded by
// encoding/json, kept if it is a string or a number that is an int64.
func referenceValidID(id json.RawMessage) bool {
	var v any
	d := json.NewDecoder(bytes.NewReader(id))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return true
	case json.Number:
		_, err := v.Int64()
		return err == nil
	}
	return false
}

// FuzzIDCheckAgreesWithDecoding checks, on every message that decodes,
// that Decode keeps an id exactly when encoding/json reads it as a string
// or an int64 (referenceValidID).
func FuzzIDCheckAgreesWithDecoding(f *testing.F) {
	for _, id := range []string{`1`, `-1`, `0`, `-0`, `"a"`, `""`, `"\u00e9"`, `1.0`, `1e3`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775809`, `null`, `true`, `{}`, `[]`, ` 7 `, `007`} {
		f.Add(`{"jsonrpc":"2.0","id":` + id + `,"method":"m"}`)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var m Message
		if json.Unmarshal([]byte(raw), &m) != nil || m.JSONRPC != "2.0" || m.ID == nil {
			return
		}
		id := append(json.RawMessage(nil), m.ID...)
		got, rpcErr := Decode([]byte(raw))
		kept := rpcErr == nil || !strings.Contains(rpcErr.Message, "id must be")
		if want := referenceValidID(id); kept != want {
			t.Fatalf("id %s: kept %v, want %v (%v)", id, kept, want, rpcErr)
		}
		if kept && got != nil && !bytes.Equal(got.ID, id) {
			t.Fatalf("id %s came out as %s", id, got.ID)
		}
	})
}
