package pdk

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Inside a plugin encoding/json is slow: its scanner calls a function for
// every byte, and in WebAssembly, all the more under a host that checks for
// cancellation in every loop as mcphost's sandbox does, each call and loop
// iteration costs tens of nanoseconds. A json.Unmarshal of 2 MiB took about
// half a second, and the PDK used to scan a call's input six times before
// decoding its arguments.
//
// unmarshal therefore decodes the plain types of tool arguments and of the
// ABI envelopes itself, finding the end of strings eight bytes at a time. It
// is a fast path, not a second implementation: whenever it cannot be sure to
// produce exactly what json.Unmarshal produces (invalid JSON, a type mismatch,
// a type it does not handle, a duplicate key) it gives up and json.Unmarshal
// decodes the input, so results and errors stay those of encoding/json.

// unmarshal is json.Unmarshal(data, v) for v a non-nil pointer to a zero
// value.
func unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		if p := planFor(rv.Type().Elem()); p != nil {
			d := decoder{data: data}
			if d.value(p, rv.Elem()) && d.end() {
				return nil
			}
			rv.Elem().SetZero() // forget what the fast path decoded
		}
	}
	return json.Unmarshal(data, v)
}

// A plan is how the fast path decodes a Go type. Only types whose decoding
// it reproduces exactly have one: booleans, numbers, strings, pointers,
// slices, arrays, maps with string keys, empty interfaces, json.RawMessage
// and structs without embedded fields, built of such types and without
// custom unmarshalling.
type plan struct {
	t      reflect.Type
	elem   *plan       // of pointer, slice, array and map elements
	fields []planField // of a struct, in declaration order
}

type planField struct {
	name  string // the JSON name, as encoding/json derives it
	index int
	plan  *plan
}

// plans holds the plans made so far, nil for types left to encoding/json.
// It is a list, not a map keyed by reflect.Type: a plugin decodes a few
// types, and in TinyGo looking up an interface key allocates, while
// comparing one does not.
var plans struct {
	sync.Mutex
	list []typePlan
}

type typePlan struct {
	t reflect.Type
	p *plan
}

// planFor returns the plan of t, nil when encoding/json must decode it.
func planFor(t reflect.Type) *plan {
	plans.Lock()
	defer plans.Unlock()
	for _, tp := range plans.list {
		if tp.t == t {
			return tp.p
		}
	}
	p := planner{}.plan(t)
	plans.list = append(plans.list, typePlan{t, p})
	return p
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// planner builds the plan of a type, remembering the plans under
// construction so that recursive types end.
type planner map[reflect.Type]*plan

func (pl planner) plan(t reflect.Type) *plan {
	if p, ok := pl[t]; ok {
		return p
	}
	p := &plan{t: t}
	pl[t] = p
	switch {
	case t == rawMessageType:
		return p
	case t.Kind() == reflect.Pointer:
		// The methods of *E are those of PointerTo(E), checked for E.
		if p.elem = pl.plan(t.Elem()); p.elem == nil {
			return nil
		}
		return p
	}
	for _, u := range []reflect.Type{unmarshalerType, textUnmarshalerType} {
		if t.Implements(u) || reflect.PointerTo(t).Implements(u) {
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return p
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return nil
		}
		return p
	case reflect.Slice, reflect.Array:
		if p.elem = pl.plan(t.Elem()); p.elem == nil {
			return nil
		}
		return p
	case reflect.Map:
		if t.Key().Kind() != reflect.String || pl.plan(t.Key()) == nil {
			return nil
		}
		if p.elem = pl.plan(t.Elem()); p.elem == nil {
			return nil
		}
		return p
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous {
				return nil // encoding/json's embedding rules are not reproduced
			}
			tag := f.Tag.Get("json")
			if !f.IsExported() || tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			for _, o := range strings.Split(opts, ",") {
				if o == "string" {
					return nil
				}
			}
			if !isValidTag(name) {
				name = f.Name
			}
			for _, g := range p.fields {
				if g.name == name {
					return nil // encoding/json drops or ranks such fields
				}
			}
			fp := pl.plan(f.Type)
			if fp == nil {
				return nil
			}
			p.fields = append(p.fields, planField{name: name, index: i, plan: fp})
		}
		return p
	}
	return nil
}

// isValidTag is encoding/json's test of a name in a json tag.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// field returns the position in p.fields of the field a key decodes into,
// matched as encoding/json does: exactly, else ignoring case; -1 for none.
func (p *plan) field(key []byte) int {
	for i, f := range p.fields {
		if f.name == string(key) {
			return i
		}
	}
	for i, f := range p.fields {
		if strings.EqualFold(f.name, string(key)) {
			return i
		}
	}
	return -1
}

// maxDepth bounds the nesting the fast path follows; encoding/json decodes
// deeper documents (up to its own limit of 10000).
const maxDepth = 1000

// decoder is the fast path's parser. Its methods report false when the
// input is not valid JSON or encoding/json would not decode it as they do.
type decoder struct {
	data      []byte
	off       int
	depth     int
	useNumber bool // numbers in interface values are json.Number
	spaced    bool // white space was skipped (see isCompact)
}

func (d *decoder) skipSpace() {
	for ; d.off < len(d.data); d.off++ {
		switch d.data[d.off] {
		case ' ', '\t', '\n', '\r':
			d.spaced = true
		default:
			return
		}
	}
}

// next skips white space and returns the next byte, 0 at the end.
func (d *decoder) next() byte {
	d.skipSpace()
	if d.off < len(d.data) {
		return d.data[d.off]
	}
	return 0
}

// end reports whether only white space is left.
func (d *decoder) end() bool { return d.next() == 0 && d.off == len(d.data) }

// value decodes the next value into v, of plan p.
func (d *decoder) value(p *plan, v reflect.Value) bool {
	c := d.next()
	switch {
	case p.t == rawMessageType: // json.RawMessage copies the value's text
		start := d.off
		if !d.skip() {
			return false
		}
		v.SetBytes(bytes.Clone(d.data[start:d.off]))
		return true
	case v.Kind() == reflect.Pointer:
		if c == 'n' {
			v.SetZero()
			return d.literal("null")
		}
		if v.IsNil() {
			v.Set(reflect.New(p.t.Elem()))
		}
		return d.value(p.elem, v.Elem())
	case v.Kind() == reflect.Interface:
		x, ok := d.valueInterface()
		if x == nil {
			v.SetZero()
		} else {
			v.Set(reflect.ValueOf(x))
		}
		return ok
	}
	switch c {
	case '{':
		return d.object(p, v)
	case '[':
		return d.array(p, v)
	case '"':
		s, ok := d.str()
		if !ok {
			return false
		}
		switch {
		case v.Kind() == reflect.String && p.t != numberType:
			v.SetString(string(s))
		case v.Kind() == reflect.Slice && p.t.Elem().Kind() == reflect.Uint8:
			b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
			n, err := base64.StdEncoding.Decode(b, s)
			if err != nil {
				return false
			}
			v.SetBytes(b[:n])
		default:
			return false
		}
		return true
	case 't':
		if v.Kind() != reflect.Bool {
			return false
		}
		v.SetBool(true)
		return d.literal("true")
	case 'f':
		if v.Kind() != reflect.Bool {
			return false
		}
		return d.literal("false")
	case 'n':
		switch v.Kind() {
		case reflect.Map, reflect.Slice:
			v.SetZero()
		}
		return d.literal("null")
	}
	num, ok := d.number()
	if !ok {
		return false
	}
	s := string(num)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v.OverflowInt(n) {
			return false
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || v.OverflowUint(n) {
			return false
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, p.t.Bits())
		if err != nil || v.OverflowFloat(f) {
			return false
		}
		v.SetFloat(f)
	case reflect.String:
		if p.t != numberType {
			return false
		}
		v.SetString(s)
	default:
		return false
	}
	return true
}

// object decodes the object at d.off into the map or struct v.
func (d *decoder) object(p *plan, v reflect.Value) bool {
	var seen []bool // struct fields already set: a duplicate key gives up
	switch v.Kind() {
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(p.t))
		}
	case reflect.Struct:
		seen = make([]bool, len(p.fields))
	default:
		return false
	}
	it := d.enter('}')
	for d.more(&it) {
		key, ok := d.key()
		if !ok {
			return false
		}
		if v.Kind() == reflect.Map {
			elem := reflect.New(p.t.Elem()).Elem()
			if !d.value(p.elem, elem) {
				return false
			}
			k := reflect.New(p.t.Key()).Elem()
			k.SetString(string(key))
			v.SetMapIndex(k, elem)
			continue
		}
		i := p.field(key)
		switch {
		case i < 0:
			ok = d.skip()
		case seen[i]:
			return false
		default:
			seen[i] = true
			f := p.fields[i]
			ok = d.value(f.plan, v.Field(f.index))
		}
		if !ok {
			return false
		}
	}
	return it.ok
}

// array decodes the array at d.off into the slice or array v.
func (d *decoder) array(p *plan, v reflect.Value) bool {
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return false
	}
	i := 0
	it := d.enter(']')
	for d.more(&it) {
		var ok bool
		switch {
		case v.Kind() == reflect.Slice:
			if i >= v.Cap() {
				v.Grow(1)
			}
			v.SetLen(i + 1)
			ok = d.value(p.elem, v.Index(i))
		case i >= v.Len():
			ok = d.skip() // past the end of the array
		default:
			ok = d.value(p.elem, v.Index(i))
		}
		if !ok {
			return false
		}
		i++
	}
	if it.ok && i == 0 && v.Kind() == reflect.Slice {
		v.Set(reflect.MakeSlice(p.t, 0, 0)) // [] is an empty slice, not nil
	}
	return it.ok
}

// valueInterface decodes the next value as encoding/json decodes into an
// empty interface.
func (d *decoder) valueInterface() (any, bool) {
	switch c := d.next(); c {
	case '{':
		m := map[string]any{}
		it := d.enter('}')
		for d.more(&it) {
			key, ok := d.key()
			if !ok {
				return m, false
			}
			x, ok := d.valueInterface()
			m[string(key)] = x
			if !ok {
				return m, false
			}
		}
		return m, it.ok
	case '[':
		a := make([]any, 0)
		it := d.enter(']')
		for d.more(&it) {
			x, ok := d.valueInterface()
			a = append(a, x)
			if !ok {
				return a, false
			}
		}
		return a, it.ok
	case '"':
		s, ok := d.str()
		return string(s), ok
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	}
	num, ok := d.number()
	if !ok {
		return nil, false
	}
	if d.useNumber {
		return json.Number(num), true
	}
	f, err := strconv.ParseFloat(string(num), 64)
	return f, err == nil
}

// skip checks the next value and moves past it.
func (d *decoder) skip() bool {
	switch c := d.next(); c {
	case '{', '[':
		it := d.enter(c + 2) // '}' or ']'
		for d.more(&it) {
			if c == '{' {
				if _, ok := d.key(); !ok {
					return false
				}
			}
			if !d.skip() {
				return false
			}
		}
		return it.ok
	case '"':
		_, _, ok := d.scanString()
		return ok
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	_, ok := d.number()
	return ok
}

// iter is the walk of the members or elements of an object or array:
//
//	it := d.enter('}')
//	for d.more(&it) {
//		read a key (members) and a value
//	}
//	return it.ok
//
// (The walk takes no function to call for each item: in TinyGo a closure
// is allocated, and allocations are what makes its collector run.)
type iter struct {
	closer byte
	items  int
	ok     bool // the walk ended at the closer; false until then
	bad    bool // the input is not valid JSON
}

// enter moves past the '{' or '[' at d.off, whose closer is closer.
func (d *decoder) enter(closer byte) iter {
	d.off++
	d.depth++
	return iter{closer: closer, bad: d.depth > maxDepth}
}

// more reports whether another member or element follows, moving past the
// comma before it; at the closer it moves past it and sets it.ok.
func (d *decoder) more(it *iter) bool {
	if it.bad || it.ok {
		return false
	}
	switch c := d.next(); {
	case c == it.closer:
		d.off++
		d.depth--
		it.ok = true
		return false
	case it.items == 0:
	case c == ',':
		d.off++
	default:
		it.bad = true
		return false
	}
	it.items++
	return true
}

// key reads a member's key and the colon after it, leaving d.off at its
// value.
func (d *decoder) key() ([]byte, bool) {
	if d.next() != '"' {
		return nil, false
	}
	key, ok := d.str()
	if !ok || d.next() != ':' {
		return nil, false
	}
	d.off++
	return key, true
}

// literal moves past lit (true, false or null) at d.off.
func (d *decoder) literal(lit string) bool {
	if len(d.data)-d.off < len(lit) || string(d.data[d.off:d.off+len(lit)]) != lit {
		return false
	}
	d.off += len(lit)
	return true
}

// number moves past the number at d.off and returns it.
func (d *decoder) number() ([]byte, bool) {
	b, i := d.data, d.off
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	num := b[d.off:i]
	d.off = i
	return num, true
}

// str moves past the string at d.off and returns its value. Without
// escapes and invalid UTF-8 the value is the string's text, not a copy.
func (d *decoder) str() ([]byte, bool) {
	start := d.off + 1
	end, escaped, ok := d.scanString()
	if !ok {
		return nil, false
	}
	s := d.data[start:end]
	if !escaped && utf8.Valid(s) {
		return s, true
	}
	return unquote(s), true
}

// scanString checks the string at d.off and moves past it. end is the
// offset of its closing quote; escaped reports backslash escapes.
func (d *decoder) scanString() (end int, escaped, ok bool) {
	b := d.data
	for i := d.off + 1; ; {
		i = indexStringSpecial(b, i)
		if i >= len(b) || b[i] < 0x20 {
			return 0, false, false
		}
		if b[i] == '"' {
			d.off = i + 1
			return i, escaped, true
		}
		escaped = true // b[i] is a backslash
		if i+1 >= len(b) {
			return 0, false, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) || getu4(b[i:]) < 0 {
				return 0, false, false
			}
			i += 6
		default:
			return 0, false, false
		}
	}
}

// unquote returns the value of the text s of a valid JSON string with
// escapes or invalid UTF-8, as encoding/json's unquoteBytes does.
func unquote(s []byte) []byte {
	t := make([]byte, 0, len(s)+2*utf8.UTFMax)
	for r := 0; r < len(s); {
		// Copy up to the next backslash or non-ASCII byte.
		j := r
		for ; j+8 <= len(s); j += 8 {
			x := load64(s, j)
			if m := (x | hasByte(x, '\\')) & msb; m != 0 {
				j += bits.TrailingZeros64(m) / 8
				break
			}
		}
		for ; j < len(s) && s[j] != '\\' && s[j] < utf8.RuneSelf; j++ {
		}
		t = append(t, s[r:j]...)
		if r = j; r == len(s) {
			break
		}
		if s[r] != '\\' {
			c, size := utf8.DecodeRune(s[r:]) // invalid UTF-8 becomes U+FFFD
			t = utf8.AppendRune(t, c)
			r += size
			continue
		}
		switch c := s[r+1]; c {
		case 'b':
			t = append(t, '\b')
		case 'f':
			t = append(t, '\f')
		case 'n':
			t = append(t, '\n')
		case 'r':
			t = append(t, '\r')
		case 't':
			t = append(t, '\t')
		case 'u':
			c := getu4(s[r:])
			r += 6
			if utf16.IsSurrogate(c) {
				if dec := utf16.DecodeRune(c, getu4(s[r:])); dec != unicode.ReplacementChar {
					t = utf8.AppendRune(t, dec)
					r += 6
					continue
				}
				c = unicode.ReplacementChar
			}
			t = utf8.AppendRune(t, c)
			continue
		default: // '"', '\\' and '/'
			t = append(t, c)
		}
		r += 2
	}
	return t
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// Bytes are examined eight at a time: load64 reads them as a word, and the
// bit tricks below set the high bit of each byte of interest (exactly at the
// lowest such byte, perhaps spuriously above it).
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

func load64[T string | []byte](s T, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// hasByte marks the bytes of x equal to c.
func hasByte(x uint64, c byte) uint64 {
	y := x ^ lsb*uint64(c)
	return (y - lsb) &^ y & msb
}

// hasLess marks the bytes of x below n (at most 0x80).
func hasLess(x uint64, n byte) uint64 { return (x - lsb*uint64(n)) &^ x & msb }

// indexStringSpecial returns the index of the first quote, backslash or
// control character in b at or after i, len(b) if none.
func indexStringSpecial(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := load64(b, i)
		if m := hasByte(x, '"') | hasByte(x, '\\') | hasLess(x, 0x20); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}
