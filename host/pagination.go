package host

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Cursors are opaque to clients: base64url of "<list>:<offset>". A cursor for
// another list, or one that does not decode, is invalid params.

func encodeCursor(list string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(list + ":" + strconv.Itoa(offset)))
}

// page returns the bounds of the page a cursor asks for in a list of n
// items, and the cursor of the page after it ("" at the end).
func page(list, cursor string, n, size int) (start, end int, next string, err *RPCError) {
	if cursor != "" {
		raw, decErr := base64.RawURLEncoding.DecodeString(cursor)
		name, off, ok := strings.Cut(string(raw), ":")
		start, convErr := strconv.Atoi(off)
		if decErr != nil || !ok || name != list || convErr != nil || start < 0 || start > n {
			return 0, 0, "", rpcErrorf(CodeInvalidParams, "invalid params: invalid cursor %q", cursor)
		}
		return pageFrom(list, start, n, size)
	}
	return pageFrom(list, 0, n, size)
}

func pageFrom(list string, start, n, size int) (int, int, string, *RPCError) {
	end := min(start+size, n)
	next := ""
	if end < n {
		next = encodeCursor(list, end)
	}
	return start, end, next, nil
}

// listPage serves one page of a catalog list for a list request, each entry
// seen through view at the session's protocol version.
func listPage[E owned, T any](req *request, p *listParams, list string, entries []E, view func(E, string) T) ([]T, string, error) {
	entries = usable(req, visible(req.view(), entries))
	owners := make([]*Plugin, len(entries))
	for i, e := range entries {
		owners[i] = e.owner()
	}
	req.cacheFrom(owners...)
	start, end, next, err := page(list, p.Cursor, len(entries), req.srv.opts.PageSize)
	if err != nil {
		return nil, "", err
	}
	version := req.version()
	items := make([]T, 0, end-start)
	for _, e := range entries[start:end] {
		items = append(items, view(e, version))
	}
	return items, next, nil
}
