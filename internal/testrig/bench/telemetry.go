package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync/atomic"
)

// TelemetryResult is the server CPU per stdio tools/call of a server with
// some of its telemetry on, against the same server with all of it off,
// in the same rounds, interleaved (runCalls).
type TelemetryResult struct {
	// Setting names what is on: "off"; "off-again", a second server with
	// all of it off, whose overhead is the measurement's noise;
	// "metrics"; "metrics+traces", every span sampled and exported;
	// "metrics+traces-10%", a tenth of them.
	Setting      string  `json:"setting"`
	CPUUSPerCall float64 `json:"cpu_us_per_call"`
	// Overhead is the median over the rounds of the round's CPU per call
	// over the off server's, minus 1; Min and Max its spread.
	Overhead    float64 `json:"overhead"`
	OverheadMin float64 `json:"overhead_min"`
	OverheadMax float64 `json:"overhead_max"`
}

// telemetrySettings are the servers the telemetry part compares: the
// same plugin, with [telemetry] as each says; the first two alike, so
// that what one measures over the other is the noise. Over stdio, /metrics needs
// a listener of its own; traces go, every one sampled, to a loopback
// OTLP/HTTP receiver (receiverURL), and then a tenth of them.
func telemetrySettings(receiverURL string) [][2]string {
	return [][2]string{
		{"off", "[telemetry]\nmetrics = \"off\"\n"},
		{"off-again", "[telemetry]\nmetrics = \"off\"\n"},
		{"metrics", "[telemetry]\nmetrics_listen = \"127.0.0.1:0\"\n"},
		{"metrics+traces", fmt.Sprintf("[telemetry]\nmetrics_listen = \"127.0.0.1:0\"\ntraces = \"otlp\"\notlp_endpoint = %q\ntrace_sample_ratio = 1.0\n", receiverURL)},
		{"metrics+traces-10%", fmt.Sprintf("[telemetry]\nmetrics_listen = \"127.0.0.1:0\"\ntraces = \"otlp\"\notlp_endpoint = %q\ntrace_sample_ratio = 0.1\n", receiverURL)},
	}
}

// otlpSink is a loopback OTLP/HTTP receiver that accepts every export and
// counts its bytes.
type otlpSink struct {
	srv   *http.Server
	url   string
	bytes atomic.Int64
}

func startOTLPSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &otlpSink{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// runTelemetry measures the telemetry settings on the plugin of dir:
// rounds of perRound calls to each, interleaved, each round on new
// servers; with profile, each server writes its CPU profile there
// (profileCallServers), the last round's.
func runTelemetry(mcphost, work, dir, profile string, rounds, perRound int) ([]*TelemetryResult, error) {
	sink, err := startOTLPSink()
	if err != nil {
		return nil, err
	}
	defer sink.srv.Close()
	var servers []*callServer
	for _, s := range telemetrySettings(sink.url) {
		argv, err := serveArgsWith(mcphost, work, dir, filepath.Join(work, "telemetry-cache-"+s[0]), s[1], "--watch=false")
		if err != nil {
			return nil, err
		}
		servers = append(servers, &callServer{lang: s[0], argv: argv})
	}
	if profile != "" {
		if err := profileCallServers(servers, profile); err != nil {
			return nil, err
		}
	}
	perServer := make([][]CallRound, len(servers))
	for round := range rounds {
		// New servers every round: a process's own luck (where its heap
		// and the plugin's compiled code landed) moved its CPU per call
		// by a few percent for as long as it ran, more than what is
		// measured here.
		first := round % len(servers)
		order := append(slices.Clone(servers[first:]), servers[:first]...)
		calls, err := runCalls(order, 1, perRound)
		if err != nil {
			return nil, err
		}
		for k, c := range calls {
			i := (first + k) % len(servers)
			perServer[i] = append(perServer[i], c.Rounds[0])
		}
	}
	var out []*TelemetryResult
	for i, cs := range servers {
		var overheads []float64
		for k, r := range perServer[i] {
			overheads = append(overheads, r.CPUUSPerCall/perServer[0][k].CPUUSPerCall-1)
		}
		res := &TelemetryResult{Setting: cs.lang, CPUUSPerCall: median(perServer[i], func(r CallRound) float64 { return r.CPUUSPerCall }),
			Overhead: median(overheads, func(x float64) float64 { return x }), OverheadMin: slices.Min(overheads), OverheadMax: slices.Max(overheads)}
		progress("telemetry %s: CPU %.1f µs a call, %+.1f%% over off (rounds %+.1f%% to %+.1f%%)", res.Setting, res.CPUUSPerCall,
			100*res.Overhead, 100*res.OverheadMin, 100*res.OverheadMax)
		out = append(out, res)
	}
	progress("telemetry: the OTLP receiver took %d KiB of spans", sink.bytes.Load()>>10)
	return out, nil
}
