package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// maxStdioMessage bounds one incoming stdio message (a line).
const maxStdioMessage = 16 << 20

// lineWriter writes newline-delimited messages, one at a time.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Send(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	_, err := l.w.Write(buf)
	return err
}

// ServeStdio serves one session over newline-delimited JSON-RPC on r and w,
// the MCP stdio transport. It returns when r reaches EOF or ctx is done.
// On EOF, requests in flight get grace to finish and are then cancelled; on
// ctx done they are cancelled at once. Either way it waits for them.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer, grace time.Duration) error {
	out := &lineWriter{w: w}
	sess := s.OpenSession(out, SessionOptions{Transport: TransportStdio})
	defer sess.Close()

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := readLine(br, maxStdioMessage)
			if err == errLineTooLong {
				_ = out.Send(encodeResponse(nil, nil, rpcErrorf(CodeInvalidRequest, "invalid request: message larger than %d bytes", maxStdioMessage)))
				continue
			}
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				readErr <- err
				return
			}
		}
	}()

	for {
		select {
		case line := <-lines:
			if len(line) == 0 {
				continue
			}
			sess.Handle(ctx, line, out)
		case err := <-readErr:
			if err != nil {
				s.logger.Error("reading stdin", "err", err)
			}
			sess.Shutdown(grace)
			return err
		case <-ctx.Done():
			sess.Close()
			sess.Wait()
			return nil
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its end of line. A line longer than max
// is read to its end, dropped, and reported as errLineTooLong.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong && err == nil {
			return nil, errLineTooLong
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}
