"""The catalogue of bad inputs, one row each: the command line, the bad value its error must name,
and the exit status: 2 for bad input (usage), 1 for a runtime failure (here: the stack or run a
valid command names does not exist). Every row must print exactly one line on stderr and leave
no state behind: no FANOUT_HOME, no results folder.

Commands are run in-process through the CLI's entry point, as `make` runs them. A new command
adds its rows here.
"""

import pytest

from fanout import cli

FULL_WIDTH_10 = "\uff11\uff10"
TOO_BIG = "1e400"  # float() reads it as infinity

CATALOGUE = [
    # deploy / plan: every parameter, before Terraform or the emulator runs
    (["deploy", "--concurrency", "0"], "'0'", 2),
    (["deploy", "--concurrency", "1001"], "'1001'", 2),
    (["deploy", "--concurrency", FULL_WIDTH_10], repr(FULL_WIDTH_10), 2),
    (["deploy", "--memory", "127"], "'127'", 2),
    (["deploy", "--memory", "1e3"], "'1e3'", 2),
    (["deploy", "--concurrency", "2,4"], "`make sweep`", 2),  # a list: a sweep's
    (["deploy", "--object-size", "5M"], "'5M'", 2),  # a bare M: 10^6 or 2^20?
    (["deploy", "--object-size", "64XB"], "'64XB'", 2),
    (["deploy", "--object-size=-1MiB"], "'-1MiB'", 2),
    (["deploy", "--object-size", f"{FULL_WIDTH_10}MiB"], repr(f"{FULL_WIDTH_10}MiB"), 2),
    (["deploy", "--region", "mars"], "'mars'", 2),
    (["deploy", "--architecture", "arm"], "'arm'", 2),
    (["deploy", "--mode", "mmap"], "'mmap'", 2),
    (["deploy", "--function-timeout", "0"], "'0'", 2),
    (["deploy", "--function-timeout", "901"], "'901'", 2),
    (["deploy", "--function-timeout", "nan"], "'nan'", 2),
    (["deploy", "--stack", "x;touch pwned"], "'x;touch pwned'", 2),
    (["deploy", "--stack", "a b"], "'a b'", 2),
    (["deploy", "--stack", "xn--fanout"], "'xn--fanout'", 2),  # prefixes S3 forbids in bucket names
    (["deploy", "--stack", "sthree-fanout"], "'sthree-fanout'", 2),
    (["sweep", "--stack", "amzn-s3-demo-fanout"], "'amzn-s3-demo-fanout'", 2),
    (["deploy", "--backend", "gcp"], "'gcp'", 2),
    (["deploy", "--endpoint", "http://localhost:4566"], "'http://localhost:4566'", 2),
    (["deploy", "--backend", "aws", "--endpoint", "ftp://x"], "'ftp://x'", 2),
    (["plan", "--memory", "99"], "'99'", 2),
    # deploy / plan: storage classes (docs/storage.md), before the backend is checked
    (["deploy", "--storage", "standard glacier"], "'glacier'", 2),
    (["deploy", "--storage", " "], "' '", 2),
    (["deploy", "--backend", "aws", "--storage", "express"], "--express-az ''", 2),
    (["deploy", "--backend", "aws", "--storage", "express", "--express-az", "us-east-1a"], "'us-east-1a'", 2),
    (["deploy", "--backend", "aws", "--storage", "express", "--express-az", "use1-az4;x"], "'use1-az4;x'", 2),
    (["deploy", "--backend", "aws", "--storage", "express", "--express-az", "use1-az1"], "'use1-az1'", 2),  # no S3 Express
    (["deploy", "--backend", "aws", "--storage", "express", "--express-az", "euw1-az1"], "'euw1-az1'", 2),  # other region
    (["deploy", "--backend", "aws", "--region", "eu-west-3", "--storage", "express", "--express-az", "euw3-az1"],
     "'eu-west-3'", 2),  # a region the zone table does not know
    (["deploy", "--express-az", "use1-az4"], "'use1-az4'", 2),  # no express to place
    (["deploy", "--storage", "standard express", "--express-az", "use1-az4"], "'express'", 2),  # local
    (["plan", "--storage", "express", "--express-az", "use1-az4"], "'express'", 2),  # local
    # fire: counts, tag, fraction, before the stack is looked up
    (["fire", "--messages", "0"], "'0'", 2),
    (["fire", "--messages", "-3"], "'-3'", 2),
    (["fire", "--messages", "2.5"], "'2.5'", 2),
    (["fire", "--messages", FULL_WIDTH_10], repr(FULL_WIDTH_10), 2),
    (["fire", "--messages", "1e3"], "'1e3'", 2),
    (["fire", "--multiplier", "0"], "'0'", 2),
    (["fire", "--tag", "a\nb"], "'a\\nb'", 2),  # control characters
    (["fire", "--tag", 'say "hi"'], "say \"hi\"", 2),  # quotes
    (["fire", "--tag", "it's"], "it's", 2),
    (["fire", "--tag", "back\\slash"], "back\\\\slash", 2),
    (["fire", "--tag", "trailing "], "'trailing '", 2),
    (["fire", "--tag", "x" * 65], "x" * 65, 2),
    (["fire", "--tag", "caf\u00e9"], "'caf\u00e9'", 2),
    (["fire", "--inject-failures", "0"], "'0'", 2),
    (["fire", "--inject-failures", "1.5"], "'1.5'", 2),
    (["fire", "--inject-failures", "nan"], "'nan'", 2),
    (["fire", "--inject-failures", "\uff10.\uff15"], repr("\uff10.\uff15"), 2),
    (["fire", "--workers", "x"], "'x'", 2),
    (["fire", "--mode", "mmap"], "'mmap'", 2),
    (["fire", "--workload", "upload"], "'upload'", 2),
    (["fire", "--workload", "latency", "--sizes", "0"], "'0'", 2),
    (["fire", "--workload", "latency", "--sizes", "1 101MB"], "'101MB'", 2),
    (["fire", "--workload", "latency", "--sizes", "1KX"], "'1KX'", 2),
    (["fire", "--workload", "latency", "--sizes", "1.5KB"], "'1.5KB'", 2),
    (["fire", "--workload", "latency", "--sizes", "1 1"], "'1 1'", 2),
    (["fire", "--workload", "latency", "--sizes", " "], "' '", 2),
    (["fire", "--workload", "latency", "--reps", "0"], "'0'", 2),
    (["fire", "--workload", "latency", "--reps", "1001"], "'1001'", 2),
    (["fire", "--workload", "latency", "--reps", FULL_WIDTH_10], repr(FULL_WIDTH_10), 2),
    (["fire", "--workload", "latency", "--storage", "glacier"], "'glacier'", 2),
    (["fire", "--workload", "latency", "--strategy", "stream"], "--strategy", 2),
    (["fire", "--sizes", "1KB"], "--sizes", 2),  # a latency option on a download run
    (["fire", "--workload", "seqread", "--jobs", "0"], "JOBS '0'", 2),
    (["fire", "--workload", "seqread", "--jobs", "65"], "JOBS '65'", 2),
    (["fire", "--workload", "seqread", "--block", "60KiB"], "BLOCK '60KiB'", 2),
    (["fire", "--workload", "seqread", "--from", "tokyo"], "FROM 'tokyo'", 2),
    (["fire", "--jobs", "4"], "--jobs", 2),  # a seqread option on a download run
    (["fire", "--workload", "latency", "--pin", "auto"], "--pin", 2),
    (["fire", "--pin", "fastest"], "'fastest'", 2),
    (["fire", "--pin", "NONE"], "'NONE'", 2),
    (["fire", "--pin", "10.0.0.256"], "'10.0.0.256'", 2),
    (["fire", "--pin", "s3.amazonaws.com"], "'s3.amazonaws.com'", 2),
    (["fire", "--pin", ""], "''", 2),
    (["fire", "--pin", "\uff11.2.3.4"], repr("\uff11.2.3.4"), 2),
    (["fire", "--messages", "5", "--stack", "absent"], "'absent'", 1),  # valid, but nothing deployed
    # wait: the timeout, then the run
    (["wait", "--timeout", "-1"], "'-1'", 2),
    (["wait", "--timeout", "0"], "'0'", 2),
    (["wait", "--timeout", TOO_BIG], repr(TOO_BIG), 2),
    (["wait", "--timeout", "inf"], "'inf'", 2),
    (["wait", "--timeout", "nan"], "'nan'", 2),
    (["wait", "--timeout", FULL_WIDTH_10], repr(FULL_WIDTH_10), 2),
    (["wait", "--run", "no-such-run"], "'no-such-run'", 2),
    (["wait", "--run", "../../etc"], "'../../etc'", 2),
    (["wait", "--run", "20990101T000000Z-abcdef"], "'20990101T000000Z-abcdef'", 2),
    # report
    (["report", "--run", "no-such-run"], "'no-such-run'", 2),
    (["report", "--run", ""], "''", 2),
    (["report", "--backend", "gcp"], "'gcp'", 2),
    (["report", "--runs", "bad,run"], "'bad'", 2),
    # compare
    (["compare", "x;y", "20990101T000000Z-abcdef"], "'x;y'", 2),
    (["compare", "20990101T000000Z-abcdef", "../b"], "'20990101T000000Z-abcdef'", 2),
    # insights / export
    (["insights", "no-such-query"], "'no-such-query'", 2),
    (["insights", "queries/none.logsinsights"], "'queries/none.logsinsights'", 2),
    (["insights", "errors", "--events", "/no/such/file.jsonl"], "'/no/such/file.jsonl'", 2),
    (["insights", "errors", "--events", "/"], "'/'", 2),
    (["insights", "errors", "--hours", TOO_BIG], repr(TOO_BIG), 2),
    (["insights", "errors", "--hours", "-2"], "'-2'", 2),
    (["insights", "errors", "--start", "yesterday"], "'yesterday'", 2),
    (["insights", "errors", "--format", "xml"], "'xml'", 2),
    (["export", "--out", "x.jsonl", "--hours", "nan"], "'nan'", 2),
    # destroy / outputs
    (["destroy", "--stack", "Upper"], "'Upper'", 2),
    (["destroy", "--stack", ""], "''", 2),
    (["destroy", "--endpoint", "http://localhost:4566"], "'http://localhost:4566'", 2),
    (["destroy", "--backend", "aws", "--endpoint", "ftp:x"], "'ftp:x'", 2),
    (["outputs", "--stack", "../x"], "'../x'", 2),
    # host
    (["host", "--idle", "0"], "'0'", 2),
    (["host", "--idle", "inf"], "'inf'", 2),
    (["host", "--max-envs", FULL_WIDTH_10], repr(FULL_WIDTH_10), 2),
    # sweep: every axis value and option, before anything is deployed or recorded
    (["sweep", "--memory", "512 20000"], "'20000'", 2),
    (["sweep", "--concurrency", f"2 {FULL_WIDTH_10}"], repr(FULL_WIDTH_10), 2),
    (["sweep", "--object-size", "8MiB 3XB"], "'3XB'", 2),
    (["sweep", "--architecture", "x86_64 sparc"], "'sparc'", 2),
    (["sweep", "--strategy", "stream; teleport"], "'teleport'", 2),
    (["sweep", "--pin", "auto 127.0.0.2 localhost"], "'localhost'", 2),
    (["sweep", "--pin", "none unpinned"], "'unpinned'", 2),
    (["sweep", "--pin", "none 192.0.2.7"], "'192.0.2.7'", 2),  # the local backend answers on loopback only
    (["sweep", "--workload", "latency", "--reps", "2 0"], "'0'", 2),
    (["sweep", "--workload", "latency", "--sizes", "1 1KB; 0"], "'0'", 2),
    (["sweep", "--workload", "latency", "--sizes", "1; 1"], "'1; 1'", 2),
    (["sweep", "--workload", "latency", "--memory", "1024 128", "--sizes", "100MB"], "100000000", 2),
    (["sweep", "--workload", "teleport"], "'teleport'", 2),
    (["sweep", "--workload", "seqread", "--jobs", "1 64", "--file-size", "1GiB"], "takes 874 s", 2),
    (["sweep", "--workload", "seqread", "--remote-region", "mars-1"], "'mars-1'", 2),
    (["deploy", "--remote-region", "mars-1"], "'mars-1'", 2),
    (["deploy", "--remote-region", "us-east-1"], "stack's own region", 2),
    (["deploy", "--job-files", "4x"], "JOB_FILES '4x'", 2),
    (["deploy", "--job-files", "64x64MiB", "--remote-region", "us-west-2"], "128 ARNs", 2),  # over the policy size
    (["sweep", "--workload", "seqread", "--jobs", "64", "--file-size", "1MiB 2MiB"], "128 objects", 2),
    (["sweep", "--sizes", "1"], "--sizes", 2),
    (["sweep", "--order", "random"], "'random'", 2),
    (["sweep", "--seed", "-3", "--order", "shuffled"], "'-3'", 2),
    (["sweep", "--timeout", TOO_BIG], repr(TOO_BIG), 2),
    (["sweep", "--network", "lambda-1999"], "'lambda-1999'", 2),
    (["sweep", "--network-scale", "0"], "'0'", 2),
    (["sweep", "--resume", "nope"], "'nope'", 2),
    (["sweep", "--storage", "standard express", "--express-az", "use1-az4"], "'express'", 2),  # local
    (["wait", "--network", "lambda-1999"], "'lambda-1999'", 2),
    (["demo", "--network-scale", "-2"], "'-2'", 2),
    (["demo", "--network-scale", FULL_WIDTH_10], repr(FULL_WIDTH_10), 2),
]


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    home, results = tmp_path / "home", tmp_path / "results"
    monkeypatch.setenv("FANOUT_HOME", str(home))
    monkeypatch.setenv("FANOUT_RESULTS", str(results))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_catalogue_is_large_and_covers_every_command():
    assert len(CATALOGUE) >= 40
    commands = {argv[0] for argv, _, _ in CATALOGUE}
    assert {"deploy", "fire", "wait", "report", "insights", "destroy", "sweep"} <= commands


@pytest.mark.parametrize("argv, named, status", CATALOGUE, ids=[" ".join(row[0]) for row in CATALOGUE])
def test_bad_input_is_one_line_naming_the_value_and_creates_nothing(isolated, capsys, argv, named, status):
    before = sorted(p.name for p in isolated.iterdir())
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == status, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("fanout: error: "), err
    assert named in err
    assert sorted(p.name for p in isolated.iterdir()) == before  # no home, no results, no file
