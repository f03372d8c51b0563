#!/usr/bin/env python3
"""Random and truncated HTTP requests against zkpipe-api (tests/api/hostile.sh): PORT TOKEN N INPUT.
Every mutated body names circuit poseidon (no generator) or a witness that is not one, so a request
that parses can be refused but never becomes a job. Prints a count of answers by status; fails when a complete request got no answer in 5 s."""
import json, random, socket, sys, threading

port, token, n, input_path = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
inp = json.load(open(input_path))
rng = random.Random(24)
lock = threading.Lock()
counts = {}

def body_variants(r):
    bodies = [
        {"circuit": "poseidon", "inputs": [inp]},
        {"circuit": "mulchain", "witnesses": ["d3RucwIAAAAC" + "A" * r.randrange(0, 64)]},
        {"circuit": "poseidon", "inputs": [inp, inp], "priority": "HIGH"},
    ]
    b = json.dumps(r.choice(bodies)).encode()
    k = r.randrange(6)
    if k == 0:  # flip bytes
        b = bytearray(b)
        for _ in range(r.randrange(1, 8)):
            b[r.randrange(len(b))] = r.randrange(256)
        b = bytes(b)
    elif k == 1:  # cut
        b = b[: r.randrange(len(b))]
    elif k == 2:  # deep nesting
        d = r.randrange(1, 3000)
        b = b"[" * d + b"]" * r.randrange(d + 1)
    elif k == 3:  # huge numbers and strings
        b = json.dumps({"circuit": "poseidon", "inputs": [{"a": "9" * r.randrange(1, 5000)}]}).encode()
    elif k == 4:  # random bytes
        b = bytes(r.randrange(256) for _ in range(r.randrange(0, 400)))
    return b

def request(r):
    k = r.randrange(10)
    b = body_variants(r)
    path = r.choice(["/v1/jobs", "/v1/jobs/" + "x" * r.randrange(0, 60), "/v1/jobs/../../etc/passwd", "/v1/circuits",
                     "/healthz", "/%00", "/v1/jobs/20261202T000000.000000-abcdef?wait=0", "/" + "a" * 3000])
    method = r.choice(["POST", "GET", "DELETE", "PUT", "X" * r.randrange(1, 40)])
    auth = r.choice([f"Authorization: Bearer {token}\r\n", "Authorization: Bearer nope\r\n", "", "Authorization: \r\n"])
    cl = r.choice([str(len(b)), str(len(b) + r.randrange(1, 50)), "-1", "999999999999999999999", "abc"])
    if k >= 6:  # the JSON parser and the job checks: a well-formed request of a mutated body
        method, path, auth, cl = "POST", "/v1/jobs", f"Authorization: Bearer {token}\r\n", str(len(b))
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Length: {cl}\r\n".encode()
    chunked = k < 6 and r.random() < 0.1
    if chunked:
        head += b"Transfer-Encoding: chunked\r\n"
    if r.random() < 0.1:
        head += b"X-Long: " + b"y" * r.randrange(1, 20000) + b"\r\n"
    raw = head + b"\r\n" + b
    if k < 3:  # truncated anywhere
        raw = raw[: r.randrange(len(raw) + 1)]
    elif k == 3:  # random bytes
        raw = bytes(r.randrange(256) for _ in range(r.randrange(1, 2000)))
    # a complete request must be answered; one cut short (or a body shorter than its length) is
    # left to the server's timeouts
    return raw, k >= 4 and cl == str(len(b)) and not chunked

def worker(seed, count):
    r = random.Random(seed)
    for _ in range(count):
        raw, wait_answer = request(r)
        s = socket.socket()
        s.settimeout(5)
        code = "none"
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(raw)
            if wait_answer:
                s.shutdown(socket.SHUT_WR)
                data = s.recv(64)
                code = data[9:12].decode("latin1") if data.startswith(b"HTTP/1.") else "closed"
        except socket.timeout:
            code = "timeout"
        except OSError as e:
            code = type(e).__name__
        finally:
            s.close()
        with lock:
            counts[code] = counts.get(code, 0) + 1

threads = [threading.Thread(target=worker, args=(i, n // 4)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print("%d requests; answers: %s" % (sum(counts.values()), ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))))
sys.exit(1 if counts.get("timeout", 0) else 0)
