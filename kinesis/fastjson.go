package kinesis

import (
	"encoding/base64"
	"unicode/utf8"
)

// fastPutRecords decodes a PutRecords JSON body of the shape the SDKs
// send, {"Records":[{"Data":"...","PartitionKey":"...",
// "ExplicitHashKey":"..."},...],"StreamName":"..."} (any order, any
// spacing), without encoding/json's reflection and validation pass. It
// reports false for
// anything else (escapes in a string, invalid UTF-8, null, numbers,
// other members, bad base64, malformed JSON), and the caller then
// decodes the body with encoding/json, which reports any error with
// Kinesis's words; so the result is always what encoding/json would
// decode.
func fastPutRecords(body []byte, in *putRecordsIn) bool {
	p := jsonScan{b: body}
	if !p.byte('{') {
		return false
	}
	if p.peek('}') {
		return false
	}
	for {
		key, ok := p.str()
		if !ok || !p.byte(':') {
			return false
		}
		switch string(key) {
		case "StreamName", "StreamARN":
			v, ok := p.str()
			dst := &in.StreamName
			if string(key) == "StreamARN" {
				dst = &in.StreamARN
			}
			if !ok || !setStr(dst, v) {
				return false
			}
		case "Records":
			if !p.records(in) {
				return false
			}
		default:
			return false
		}
		if p.byte(',') {
			continue
		}
		return p.byte('}') && p.end()
	}
}

func (p *jsonScan) records(in *putRecordsIn) bool {
	if !p.byte('[') {
		return false
	}
	in.Records = make([]putRecordsEntry, 0, 16)
	if p.byte(']') {
		return true
	}
	for {
		var e putRecordsEntry
		ok := p.flatObject(func(key, v []byte) bool {
			switch string(key) {
			case "Data":
				return setBlob(&e.Data, v)
			case "PartitionKey":
				return setStr(&e.PartitionKey, v)
			case "ExplicitHashKey":
				return setStr(&e.ExplicitHashKey, v)
			}
			return false
		})
		if !ok {
			return false
		}
		in.Records = append(in.Records, e)
		if p.byte(',') {
			continue
		}
		return p.byte(']')
	}
}

// fastPutRecord is fastPutRecords for a PutRecord body.
func fastPutRecord(body []byte, in *putRecordIn) bool {
	p := jsonScan{b: body}
	return p.flatObject(func(key, v []byte) bool {
		switch string(key) {
		case "Data":
			return setBlob(&in.Data, v)
		case "PartitionKey":
			return setStr(&in.PartitionKey, v)
		case "ExplicitHashKey":
			return setStr(&in.ExplicitHashKey, v)
		case "SequenceNumberForOrdering":
			return setStr(&in.SequenceNumberForOrdering, v)
		case "StreamName":
			return setStr(&in.StreamName, v)
		case "StreamARN":
			return setStr(&in.StreamARN, v)
		}
		return false
	}) && p.end()
}

// flatObject reads a non-empty object whose members are all strings,
// calling member for each.
func (p *jsonScan) flatObject(member func(key, v []byte) bool) bool {
	if !p.byte('{') || p.peek('}') {
		return false
	}
	for {
		key, ok := p.str()
		if !ok || !p.byte(':') {
			return false
		}
		v, ok := p.str()
		if !ok || !member(key, v) {
			return false
		}
		if !p.byte(',') {
			return p.byte('}')
		}
	}
}

// setStr sets *dst to the string v, which must be valid UTF-8.
func setStr(dst **string, v []byte) bool {
	if !utf8.Valid(v) {
		return false
	}
	s := string(v)
	*dst = &s
	return true
}

// setBlob sets *dst to the bytes of the base64 v.
func setBlob(dst **blob, v []byte) bool {
	if len(v)%4 != 0 {
		return false
	}
	d := make(blob, base64.StdEncoding.DecodedLen(len(v)))
	n, err := base64.StdEncoding.Strict().Decode(d, v)
	if err != nil {
		return false
	}
	d = d[:n]
	*dst = &d
	return true
}

// jsonScan reads JSON tokens of a body.
type jsonScan struct {
	b []byte
	i int
}

func (p *jsonScan) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c, after spaces, if it comes next.
func (p *jsonScan) byte(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *jsonScan) peek(c byte) bool {
	p.space()
	return p.i < len(p.b) && p.b[p.i] == c
}

func (p *jsonScan) end() bool {
	p.space()
	return p.i == len(p.b)
}

// str reads a string without escapes or control characters and returns
// its bytes (in the body).
func (p *jsonScan) str() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			p.i++
			return p.b[start : p.i-1], true
		}
		if c == '\\' || c < 0x20 {
			return nil, false
		}
		p.i++
	}
	return nil, false
}
