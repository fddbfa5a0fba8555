//go:build !linux

package server

import "errors"

func limitFileSize(n int64) error { return errors.New("file size limits are set on Linux only") }
