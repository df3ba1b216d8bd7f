// Package redistest starts a real Redis for a test: Debian's redis-server
// (7.0) on a loopback port, in a temporary folder, with the default user
// off and one ACL user with a password, as an operator would run it for
// mcphost's shared state.
package redistest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/testenv"
	"github.com/mcphost/mcphost/redisstate"
)

// Server is a redis-server a test started.
type Server struct {
	// Addr is its host:port on 127.0.0.1.
	Addr string
	// User and Password are those of the ACL user mcphost logs in as,
	// which may run only the commands docs/scale-out.md lists; the
	// default user is off. Do logs in as an administrator.
	User, Password string
	// PasswordFile holds Password, as [state] password_file names it.
	PasswordFile string
	// CAFile is, for a server StartTLS started, the PEM file of its
	// self-signed certificate, which a client trusts as [state] ca_file;
	// "" for a server without TLS.
	CAFile string

	t    testing.TB
	tls  *tls.Config // of Do, for a server with TLS
	bin  string
	conf string
	cmd  *exec.Cmd
	done chan struct{}
	out  *bytes.Buffer
}

// MCPHostCommands are the ACL rules of the commands mcphost runs, as
// docs/scale-out.md tells operators to grant them.
const MCPHostCommands = "-@all +ping +get +set +pexpire +del +evalsha +eval +multi +exec +exists +incr +pttl +zadd +zcard +zrange +zrem +zremrangebyscore +xadd +xread +xrevrange +hget +hgetall +hset +hdel +time +strlen"

// URL returns the server's redis:// (or, with TLS, rediss://) URL with its
// user and without its password, which a configuration gives in a file.
func (s *Server) URL() string {
	if s.CAFile != "" {
		return "rediss://" + s.User + "@" + s.Addr
	}
	return "redis://" + s.User + "@" + s.Addr
}

// Start starts a Redis that stops when the test ends. Its data persists in
// an append-only file, so that Restart keeps it. Without redis-server it
// skips the test, unless CI is set: then it fails it
// (scripts/setup-redis.sh installs it).
func Start(t testing.TB) *Server { return start(t, false) }

// StartTLS starts a Redis as Start does that takes only TLS connections,
// with a self-signed certificate for 127.0.0.1 (CAFile), and no client
// certificate.
func StartTLS(t testing.TB) *Server { return start(t, true) }

func start(t testing.TB, withTLS bool) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Missing(t, "redis-server is not installed (scripts/setup-redis.sh installs it)")
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	s := &Server{Addr: addr, User: "mcphost", Password: "test-" + strings.ReplaceAll(t.Name(), "/", "-"), t: t, bin: bin, conf: filepath.Join(dir, "redis.conf")}
	s.PasswordFile = filepath.Join(dir, "password")
	if err := os.WriteFile(s.PasswordFile, []byte(s.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	listen := []string{"port " + port}
	if withTLS {
		s.CAFile = filepath.Join(dir, "cert.pem")
		key := filepath.Join(dir, "key.pem")
		cert := plugintest.WriteCert(t, s.CAFile, key, 1)
		roots := x509.NewCertPool()
		roots.AddCert(cert)
		s.tls = &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
		listen = []string{"port 0", "tls-port " + port, "tls-cert-file " + s.CAFile, "tls-key-file " + key, "tls-auth-clients no"}
	}
	conf := strings.Join(append(listen,
		"bind 127.0.0.1",
		"dir "+dir,
		`save ""`,
		"appendonly yes",
		"appendfsync always",
		"daemonize no",
		"loglevel warning",
		"user default off",
		fmt.Sprintf("user %s on >%s ~* resetchannels %s", s.User, s.Password, MCPHostCommands),
		fmt.Sprintf("user admin on >%s ~* &* +@all", s.Password),
	), "\n") + "\n"
	if err := os.WriteFile(s.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// start runs redis-server and waits until it answers.
func (s *Server) start() {
	s.t.Helper()
	s.out = new(bytes.Buffer)
	s.cmd = exec.Command(s.bin, s.conf)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if reply, err := s.Do("AUTH", "admin", s.Password); err == nil && reply == "OK" {
			return
		}
		select {
		case <-s.done:
			s.t.Fatalf("redis-server exited:\n%s", s.out.String())
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server does not answer on %s:\n%s", s.Addr, s.out.String())
		}
	}
}

// Store returns a store on the server as mcphost's user, whose keys start
// with prefix, calling roundTrip, if given, before each round trip
// (redisstate.Options.RoundTrip); it closes when the test ends.
func (s *Server) Store(prefix string, roundTrip ...func(command string)) *redisstate.Store {
	s.t.Helper()
	opts := redisstate.Options{URL: s.URL(), Password: s.Password, Prefix: prefix, TLS: s.tls}
	if len(roundTrip) > 0 {
		opts.RoundTrip = roundTrip[0]
	}
	store, err := redisstate.Open(opts)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { store.Close() })
	return store
}

// Stop stops the server, if it runs.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart stops the server and starts it again on the same port, with the
// data it had.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Do runs one command as the administrator on a connection of its own and
// returns the reply: a simple string or an integer as it is, a bulk string
// as its bytes, an array as its elements joined by newlines; an error
// reply is an error.
func (s *Server) Do(args ...string) (string, error) {
	var conn net.Conn
	var err error
	if s.tls != nil {
		conn, err = tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", s.Addr, s.tls)
	} else {
		conn, err = net.DialTimeout("tcp", s.Addr, time.Second)
	}
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	if args[0] != "AUTH" {
		if _, err := roundTrip(conn, r, "AUTH", "admin", s.Password); err != nil {
			return "", err
		}
	}
	return roundTrip(conn, r, args...)
}

// roundTrip sends a command in RESP and reads its reply.
func roundTrip(conn net.Conn, r *bufio.Reader, args ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return readReply(r)
}

// readReply reads one RESP2 reply.
func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("empty reply")
	}
	switch body := line[1:]; line[0] {
	case '+', ':':
		return body, nil
	case '-':
		return "", fmt.Errorf("redis: %s", body)
	case '$':
		var n int
		if _, err := fmt.Sscan(body, &n); err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		_, err := io.ReadFull(r, buf)
		return string(buf[:n]), err
	case '*':
		var n int
		if _, err := fmt.Sscan(body, &n); err != nil {
			return "", err
		}
		items := make([]string, 0, max(n, 0))
		for range n {
			item, err := readReply(r)
			if err != nil {
				return "", err
			}
			items = append(items, item)
		}
		return strings.Join(items, "\n"), nil
	}
	return "", fmt.Errorf("unknown reply %q", line)
}
