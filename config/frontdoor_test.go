package config

import "testing"

// TestHTTPFrontDoorKeyErrors: the [http] limits of what clients can make
// the server hold refuse values out of range, and budgets that could never
// admit a body of max_body_bytes, with the line to change.
func TestHTTPFrontDoorKeyErrors(t *testing.T) {
	testErrorCases(t, []errorCase{
		{"body budget zero", "[http]\nmax_body_bytes_in_flight = 0\n", 2,
			"http.max_body_bytes_in_flight: 0 is out of range (1..68719476736)"},
		{"client body budget high", "[http]\nmax_body_bytes_in_flight_per_client = 68719476737\n", 2,
			"http.max_body_bytes_in_flight_per_client: 68719476737 is out of range (1..68719476736)"},
		{"body budget below one body", "[http]\nmax_body_bytes = 8388608\nmax_body_bytes_in_flight = 4194304\n", 3,
			"http.max_body_bytes_in_flight: 4194304 is less than max_body_bytes (8388608): a body of that size could never be received"},
		{"default client budget below one body", "\n[http]\nmax_body_bytes = 134217728\n", 2,
			"http.max_body_bytes_in_flight_per_client: 67108864 is less than max_body_bytes (134217728)"},
		{"no connections", "[http]\nmax_connections = 0\n", 2, "http.max_connections: 0 is out of range (1..1000000)"},
		{"client connections high", "[http]\n\nmax_connections_per_client = 1000001\n", 3,
			"http.max_connections_per_client: 1000001 is out of range (1..1000000)"},
		{"proxy name", "[http]\ntrusted_proxies = [\"10.0.0.1\", \"proxy.example.com\"]\n", 2,
			`http.trusted_proxies[1]: "proxy.example.com" is not an IP address or a CIDR prefix`},
		{"proxy with port", "[http]\ntrusted_proxies = [\"10.0.0.1:8080\"]\n", 2,
			`http.trusted_proxies[0]: "10.0.0.1:8080" is not an IP address or a CIDR prefix`},
		{"proxy mapped prefix", "[http]\ntrusted_proxies = [\"::ffff:10.0.0.0/104\"]\n", 2,
			`http.trusted_proxies[0]: "::ffff:10.0.0.0/104": write an IPv4 prefix as IPv4`},
		{"batch reply zero", "[http]\nmax_batch_response_bytes = 0\n", 2, "http.max_batch_response_bytes: 0 is out of range (1..1073741824)"},
		{"proxies not a list", "[http]\ntrusted_proxies = \"10.0.0.1\"\n", 2, "http.trusted_proxies: expected array of strings, got string"},
	})
}
