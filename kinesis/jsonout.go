package kinesis

import (
	"strconv"
	"unicode/utf8"
)

// The JSON of the hot responses (PutRecord, PutRecords, GetRecords) is
// written by hand, to keep encoding/json's reflection off their path;
// the output is what encoding/json writes for the same structs (without
// HTML escaping).

// jsonAppender is a response that writes its own JSON.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it (invalid UTF-8 becomes U+FFFD).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendField(b []byte, first bool, name string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func (o putRecordOut) appendJSON(b []byte) []byte {
	b = appendField(append(b, '{'), true, "ShardId")
	b = appendJSONString(b, o.ShardId)
	b = appendField(b, false, "SequenceNumber")
	b = appendJSONString(b, o.SequenceNumber)
	return append(b, '}')
}

func (o putRecordsOut) appendJSON(b []byte) []byte {
	b = appendField(append(b, '{'), true, "FailedRecordCount")
	b = strconv.AppendInt(b, int64(o.FailedRecordCount), 10)
	b = appendField(b, false, "Records")
	b = append(b, '[')
	for i, r := range o.Records {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		first := true
		for _, f := range [...][2]string{{"SequenceNumber", r.SequenceNumber}, {"ShardId", r.ShardId}, {"ErrorCode", r.ErrorCode}, {"ErrorMessage", r.ErrorMessage}} {
			if f[1] != "" {
				b = appendField(b, first, f[0])
				b = appendJSONString(b, f[1])
				first = false
			}
		}
		b = append(b, '}')
	}
	return append(b, ']', '}')
}

func (o getRecordsOut) appendJSON(b []byte) []byte {
	b = appendField(append(b, '{'), true, "Records")
	b = append(b, '[')
	for i, r := range o.Records {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendField(append(b, '{'), true, "SequenceNumber")
		b = append(appendDecimal(append(b, '"'), r.SequenceNumber.n), '"')
		b = appendField(b, false, "ApproximateArrivalTimestamp")
		b = appendSeconds(b, r.ApproximateArrivalTimestamp.UnixMilli())
		b = appendField(b, false, "Data")
		b = append(appendBase64(append(b, '"'), string(r.Data)), '"')
		b = appendField(b, false, "PartitionKey")
		b = appendJSONString(b, r.PartitionKey)
		b = append(b, '}')
	}
	b = append(b, ']')
	if o.NextShardIterator != "" {
		b = appendField(b, false, "NextShardIterator")
		b = appendJSONString(b, o.NextShardIterator)
	}
	b = appendField(b, false, "MillisBehindLatest")
	b = strconv.AppendInt(b, o.MillisBehindLatest, 10)
	if len(o.ChildShards) > 0 {
		b = appendField(b, false, "ChildShards")
		b = append(b, '[')
		for i, c := range o.ChildShards {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendField(append(b, '{'), true, "ShardId")
			b = appendJSONString(b, c.ShardId)
			b = appendField(b, false, "ParentShards")
			b = append(b, '[')
			for j, p := range c.ParentShards {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, p)
			}
			b = append(b, ']')
			b = appendField(b, false, "HashKeyRange")
			b = appendField(append(b, '{'), true, "StartingHashKey")
			b = appendJSONString(b, c.HashKeyRange.StartingHashKey)
			b = appendField(b, false, "EndingHashKey")
			b = appendJSONString(b, c.HashKeyRange.EndingHashKey)
			b = append(b, '}', '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendSeconds writes epoch milliseconds as seconds with up to three
// decimals and no trailing zeros, as strconv formats float64(ms)/1000
// (which stamp.MarshalJSON writes) for any ms before the year 2286.
func appendSeconds(b []byte, ms int64) []byte {
	if ms < 0 {
		return strconv.AppendFloat(b, float64(ms)/1000, 'f', -1, 64)
	}
	b = strconv.AppendInt(b, ms/1000, 10)
	frac := ms % 1000
	if frac == 0 {
		return b
	}
	d := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for d[n-1] == '0' {
		n--
	}
	return append(append(b, '.'), d[:n]...)
}
