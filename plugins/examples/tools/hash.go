//go:build wasip1

package main

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

type hashArgs struct {
	Text      string `json:"text" description:"The text to hash (its UTF-8 bytes)"`
	Algorithm string `json:"algorithm,omitempty" jsonschema:"enum=sha256|sha512|sha1|md5,default=sha256"`
	Encoding  string `json:"encoding,omitempty" jsonschema:"enum=hex|base64,default=hex,description=How to encode the digest"`
}

// Digest is the structured output of hash.
type Digest struct {
	Algorithm string `json:"algorithm"`
	Encoding  string `json:"encoding"`
	Digest    string `json:"digest"`
	Bits      int    `json:"bits" description:"Size of the digest in bits"`
	Insecure  bool   `json:"insecure,omitempty" description:"True for algorithms broken for security use (md5, sha1)"`
}

func hashText(_ *pdk.Context, a hashArgs) (Digest, error) {
	d := Digest{Algorithm: a.Algorithm, Encoding: a.Encoding}
	if d.Algorithm == "" {
		d.Algorithm = "sha256"
	}
	if d.Encoding == "" {
		d.Encoding = "hex"
	}
	var h hash.Hash
	switch d.Algorithm {
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	case "sha1":
		h, d.Insecure = sha1.New(), true
	case "md5":
		h, d.Insecure = md5.New(), true
	}
	h.Write([]byte(a.Text))
	sum := h.Sum(nil)
	d.Bits = len(sum) * 8
	if d.Encoding == "base64" {
		d.Digest = base64.StdEncoding.EncodeToString(sum)
	} else {
		d.Digest = hex.EncodeToString(sum)
	}
	return d, nil
}
