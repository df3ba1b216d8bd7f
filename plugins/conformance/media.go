//go:build wasip1

package main

import (
	"encoding/base64"
	"encoding/binary"
)

// redPixelPNG is a 1x1 red RGBA PNG, the image of the suite's reference
// server (tools-call-image, tools-call-mixed-content, resources-read-binary,
// prompts-get-with-image).
var redPixelPNG = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")

// silenceWAV is a valid minimal WAV file (tools-call-audio): 16-bit mono PCM
// at 8 kHz holding 8 samples of silence (1 ms).
var silenceWAV = wav(8000, 8)

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// wav returns a RIFF/WAVE file of n silent 16-bit mono samples at rate Hz.
func wav(rate, n uint32) []byte {
	const channels, bits = 1, 16
	data := n * channels * bits / 8
	b := make([]byte, 0, 44+data)
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, 36+data)
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16) // fmt chunk size
	b = le.AppendUint16(b, 1)  // PCM
	b = le.AppendUint16(b, channels)
	b = le.AppendUint32(b, rate)
	b = le.AppendUint32(b, rate*channels*bits/8) // byte rate
	b = le.AppendUint16(b, channels*bits/8)      // block align
	b = le.AppendUint16(b, bits)
	b = append(b, "data"...)
	b = le.AppendUint32(b, data)
	return append(b, make([]byte, data)...)
}
