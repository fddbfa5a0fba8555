package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKinesisAWSCLI runs xstream-server with -kinesis-addr and drives it
// with the AWS command line: create a stream, put, get records, split,
// merge, list shards. It is skipped without aws on PATH (.ci/run installs
// Debian's awscli).
func TestKinesisAWSCLI(t *testing.T) {
	if raceEnabled {
		t.Skip("the AWS command line test runs without -race: it drives a binary built without it")
	}
	awsPath, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("aws (the AWS command line) is not on PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "xstream-server")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := exec.Command(bin, "-addr", "127.0.0.1:0", "-kinesis-addr", "127.0.0.1:0", "-dir", filepath.Join(dir, "data"))
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
	})
	endpoint := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, "serving the Kinesis API") {
				if _, url, ok := strings.Cut(line, " url="); ok {
					endpoint <- url
				}
			}
		}
	}()
	var url string
	select {
	case url = <-endpoint:
	case <-time.After(30 * time.Second):
		t.Fatal("xstream-server did not say where the Kinesis API is in 30s")
	}

	version, _ := exec.Command(awsPath, "--version").CombinedOutput()
	v2 := strings.HasPrefix(string(version), "aws-cli/2")
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_REGION=us-east-1", "AWS_PAGER=", "AWS_CONFIG_FILE="+filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"))
	aws := func(args ...string) map[string]any {
		t.Helper()
		full := append([]string{"--endpoint-url", url, "--output", "json", "kinesis"}, args...)
		cmd := exec.CommandContext(ctx, awsPath, full...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("aws %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		m := map[string]any{}
		if len(strings.TrimSpace(string(out))) > 0 {
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatalf("aws %s: %v: %s", strings.Join(args, " "), err, out)
			}
		}
		return m
	}

	aws("create-stream", "--stream-name", "orders", "--shard-count", "2")
	sum := aws("describe-stream-summary", "--stream-name", "orders")["StreamDescriptionSummary"].(map[string]any)
	if sum["StreamStatus"] != "ACTIVE" || sum["OpenShardCount"] != float64(2) {
		t.Fatalf("describe-stream-summary: %v", sum)
	}
	put := []string{"put-record", "--stream-name", "orders", "--partition-key", "user-1", "--data", "hello"}
	if v2 {
		put = append(put, "--cli-binary-format", "raw-in-base64-out")
	}
	rec := aws(put...)
	shard := rec["ShardId"].(string)
	it := aws("get-shard-iterator", "--stream-name", "orders", "--shard-id", shard, "--shard-iterator-type", "TRIM_HORIZON")["ShardIterator"].(string)
	got := aws("get-records", "--shard-iterator", it)
	recs := got["Records"].([]any)
	if len(recs) != 1 || recs[0].(map[string]any)["Data"] != "aGVsbG8=" || recs[0].(map[string]any)["SequenceNumber"] != rec["SequenceNumber"] {
		t.Fatalf("get-records: %v (put %v)", got, rec)
	}
	aws("split-shard", "--stream-name", "orders", "--shard-to-split", "shardId-000000000000", "--new-starting-hash-key", "1000")
	aws("merge-shards", "--stream-name", "orders", "--shard-to-merge", "shardId-000000000002", "--adjacent-shard-to-merge", "shardId-000000000003")
	shards := aws("list-shards", "--stream-name", "orders")["Shards"].([]any)
	var open []string
	for _, s := range shards {
		s := s.(map[string]any)
		if s["SequenceNumberRange"].(map[string]any)["EndingSequenceNumber"] == nil {
			open = append(open, s["ShardId"].(string))
		}
	}
	if len(shards) != 5 || strings.Join(open, ",") != "shardId-000000000001,shardId-000000000004" {
		t.Fatalf("list-shards: %d shards, OPEN %v: %v", len(shards), open, shards)
	}
	names := aws("list-streams")["StreamNames"].([]any)
	if len(names) != 1 || names[0] != "orders" {
		t.Fatalf("list-streams: %v", names)
	}
	aws("delete-stream", "--stream-name", "orders")
}
