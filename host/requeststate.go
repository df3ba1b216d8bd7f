package host

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The requestState of a 2026-07-28 input_required result carries what a
// retry needs to replay the plugin's call: the answers recorded so far and
// the questions asked last, each under its key with a digest of the
// question. It is signed, not encrypted (it holds the client's own
// answers): "v1.<key id>.<payload>.<mac>", the payload and mac base64url,
// the mac HMAC-SHA256 over everything before it with the server key the
// key id names. The first of Options.RequestStateKeys signs and all of
// them verify, so a key can be rotated without failing the retries in
// flight, and replicas that share the keys complete each other's retries.
// The payload binds the state to the method, a digest of the request's
// salient params, the authenticated subject and an expiry.

// DefaultRequestStateTTL is how long a requestState is accepted after it
// was issued, when Options.RequestStateTTL is not positive: long enough
// for a person to answer a form.
const DefaultRequestStateTTL = 15 * time.Minute

// maxRequestState caps the size of an encoded requestState, issued or
// received: it carries the answers so far, and the client sends it back
// with every retry.
const maxRequestState = 64 << 10

const requestStateVersion = "v1"

// requestState is the signed payload of a requestState.
type requestState struct {
	Method  string                    `json:"m"`
	Params  string                    `json:"p"` // digest of the salient params
	Subject string                    `json:"s"` // digest of the authenticated subject
	Expires int64                     `json:"e"` // Unix milliseconds
	Answers map[string]recordedAnswer `json:"a,omitempty"`
	Pending map[string]string         `json:"q,omitempty"` // key -> question digest, asked last round
}

// recordedAnswer is a client's answer to a question of an earlier round.
type recordedAnswer struct {
	Question string          `json:"q"` // digest of the question
	Answer   json.RawMessage `json:"r"`
}

// stateKeys are the server keys of requestState, the signing one first.
type stateKeys struct {
	keys [][]byte
	ids  []string
}

// newStateKeys returns the keys, or one random key of this process when
// there are none (retries then complete only on this process).
func newStateKeys(keys [][]byte) stateKeys {
	if len(keys) == 0 {
		k := make([]byte, 32)
		_, _ = rand.Read(k)
		keys = [][]byte{k}
	}
	sk := stateKeys{}
	for _, k := range keys {
		sum := sha256.Sum256(append([]byte("mcphost requestState key id\x00"), k...))
		sk.keys = append(sk.keys, bytes.Clone(k))
		sk.ids = append(sk.ids, base64.RawURLEncoding.EncodeToString(sum[:6]))
	}
	return sk
}

func (sk stateKeys) mac(key []byte, signed string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(signed))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// seal encodes and signs a state with the signing key.
func (sk stateKeys) seal(st *requestState) (string, error) {
	payload, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	signed := requestStateVersion + "." + sk.ids[0] + "." + base64.RawURLEncoding.EncodeToString(payload)
	out := signed + "." + sk.mac(sk.keys[0], signed)
	if len(out) > maxRequestState {
		return "", rpcErrorf(CodeInternalError, "internal error: the answers of this request so far make a requestState of %d bytes, over the %d bytes it may have; answer in fewer or shorter inputs", len(out), maxRequestState)
	}
	return out, nil
}

// stateError is the invalid params error of a requestState that is
// refused, with data.reason saying why: tampered, expired, other-user,
// other-request or other-arguments.
func stateError(reason, format string, args ...any) *RPCError {
	e := rpcErrorf(CodeInvalidParams, "invalid requestState: "+format, args...)
	e.Data, _ = json.Marshal(map[string]string{"reason": reason})
	return e
}

// open verifies a received requestState and decodes it. It does not check
// what it is bound to (check does).
func (sk stateKeys) open(s string) (*requestState, *RPCError) {
	if len(s) > maxRequestState {
		return nil, stateError("tampered", "it has %d bytes, more than any this server issues (%d)", len(s), maxRequestState)
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 || parts[0] != requestStateVersion {
		return nil, stateError("tampered", "it is not a requestState this server issued")
	}
	signed := strings.Join(parts[:3], ".")
	ok := false
	for i, id := range sk.ids {
		if id == parts[1] && hmac.Equal([]byte(sk.mac(sk.keys[i], signed)), []byte(parts[3])) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, stateError("tampered", "its signature does not verify with any key of this server (altered, or signed with a key it no longer has)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[2])
	var st requestState
	if err == nil {
		err = json.Unmarshal(payload, &st)
	}
	if err != nil {
		return nil, stateError("tampered", "its payload does not decode: %v", err)
	}
	return &st, nil
}

// check verifies that a state was issued for this request: the same
// method, params and subject, and not expired at now.
func (st *requestState) check(method, params, subject string, now time.Time) *RPCError {
	switch {
	case now.UnixMilli() > st.Expires:
		return stateError("expired", "it expired at %s; send the request again without it", time.UnixMilli(st.Expires).UTC().Format(time.RFC3339))
	case st.Subject != subject:
		return stateError("other-user", "it was issued to another user")
	case st.Method != method:
		return stateError("other-request", "it was issued for %s, not %s", st.Method, method)
	case st.Params != params:
		return stateError("other-arguments", "it was issued for a %s request with other arguments", method)
	}
	return nil
}

// digest is a short digest of what a state is bound to, or of a question.
func digest(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// canonicalJSON re-encodes a JSON value with sorted keys and no spaces, so
// that equal values digest alike however the client spelled them.
func canonicalJSON(raw json.RawMessage) []byte {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return raw
	}
	out, _ := json.Marshal(v)
	return out
}
