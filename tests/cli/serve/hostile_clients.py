"""tinygpt serve against clients that misbehave, then many at once; python3's standard library only.

    python3 hostile_clients.py PORT MODEL_ID CONTEXT IO_TIMEOUT hostile    each bad request gets its status,
                                                                           and a good one still succeeds after
    python3 hostile_clients.py PORT MODEL_ID CONTEXT IO_TIMEOUT crowd      32 clients x 10 requests, none failing
    python3 hostile_clients.py PORT MODEL_ID CONTEXT IO_TIMEOUT streams N  N clients streaming until the server
                                                                           goes away (for the SIGTERM check)
    python3 hostile_clients.py PORT MODEL_ID CONTEXT IO_TIMEOUT key KEY    refused without the key, then served
                                                                           with it on the same connection
    python3 hostile_clients.py PORT MODEL_ID CONTEXT IO_TIMEOUT busy       6 long replies at once on a server with
                                                                           one place and one in the queue: 503s
    python3 hostile_clients.py PORT MODEL_ID CONTEXT IO_TIMEOUT gone       3 clients that leave a long stream after
                                                                           its first chunk: the server drops them

Prints each failed check on stderr and exits 1 when there was one.
"""
import http.client
import json
import random
import socket
import sys
import threading
import time

port, model, context, io_timeout, mode = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
failures = []
lock = threading.Lock()


def check(condition, what):
    if not condition:
        with lock:
            failures.append(what)
            print(f"FAIL: {what}", file=sys.stderr)


def request(method, path, body=None, headers=None, timeout=60):
    """(status, parsed JSON or raw text) of one request on a fresh connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    connection.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, raw.decode(errors="replace")


def expect(name, status, method, path, body=None, param=None, code=None):
    got, answer = request(method, path, body)
    check(got == status, f"{name}: status {got}, expected {status}: {str(answer)[:300]}")
    if status >= 400:
        error = answer.get("error") if isinstance(answer, dict) else None
        check(isinstance(error, dict) and isinstance(error.get("message"), str) and "type" in error,
              f"{name}: not OpenAI's error shape: {str(answer)[:300]}")
        if error and param is not None:
            check(error.get("param") == param, f"{name}: param {error.get('param')!r}, expected {param!r}")
        if error and code is not None:
            check(error.get("code") == code, f"{name}: code {error.get('code')!r}, expected {code!r}")
    return answer


def completion(fields):
    return {"model": model, "prompt": "Hello", "max_tokens": 4, **fields}


def raw_exchange(data, read_timeout):
    """Sends raw bytes, returns what came back until the server closed or the timeout passed."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    try:
        sock.sendall(data)
        received = b""
        while True:
            piece = sock.recv(65536)
            if not piece:
                return received
            received += piece
    except (socket.timeout, ConnectionResetError):
        return None  # still open at the timeout (or reset)
    finally:
        sock.close()


def status_of(raw):
    return int(raw.split(b" ", 2)[1]) if raw and raw.startswith(b"HTTP/1.1 ") else None


def huge_body():
    """A 10 MB body: answered 413 (the server may stop reading it: a reset while sending is fine)."""
    body = b'{"prompt": "' + b"a" * (10 << 20) + b'"}'
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    received = b""
    try:
        sock.sendall(head.encode())
        sock.sendall(body)
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        while True:
            piece = sock.recv(65536)
            if not piece:
                break
            received += piece
            if b"\r\n\r\n" in received and b'"error"' in received:
                break
    except (socket.timeout, ConnectionResetError):
        pass
    sock.close()
    check(status_of(received) == 413, f"10 MB body: {received[:200]!r}")


def hostile():
    # A client that sends half a request and waits, and one that opens a stream and never reads it,
    # while the others are served.
    half_sent = {}

    def send_half():
        began = time.monotonic()
        head = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"prompt\": "
        half_sent["raw"] = raw_exchange(head, read_timeout=io_timeout + 10)
        half_sent["seconds"] = time.monotonic() - began

    half = threading.Thread(target=send_half)
    half.start()
    never_reads = socket.create_connection(("127.0.0.1", port))
    body = json.dumps(completion({"max_tokens": context - 2, "stream": True, "prompt": "Once"})).encode()
    never_reads.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    expect("malformed JSON", 400, "POST", "/v1/completions", b'{"prompt": "a",')
    expect("not an object", 400, "POST", "/v1/completions", b"[1, 2, 3]")
    expect("empty body", 400, "POST", "/v1/completions", b"")
    expect("prompt of the wrong type", 400, "POST", "/v1/completions", completion({"prompt": {"a": 1}}), param="prompt")
    expect("max_tokens a string", 400, "POST", "/v1/completions", completion({"max_tokens": "5"}), param="max_tokens")
    expect("negative max_tokens", 400, "POST", "/v1/completions", completion({"max_tokens": -3}), param="max_tokens")
    expect("a number past any double", 400, "POST", "/v1/completions",
           b'{"prompt": "a", "max_tokens": 1' + b"0" * 400 + b"}")
    expect("huge max_tokens", 400, "POST", "/v1/completions", completion({"max_tokens": 10**25}), param="max_tokens")
    expect("max_tokens past the cap", 400, "POST", "/v1/completions", completion({"max_tokens": 10**9}), param="max_tokens")
    expect("huge temperature", 400, "POST", "/v1/completions", completion({"temperature": 1e308}), param="temperature")
    expect("huge seed", 400, "POST", "/v1/completions", completion({"seed": 10**30}), param="seed")
    expect("prompt id outside the vocabulary", 400, "POST", "/v1/completions", completion({"prompt": [1, 10**12]}),
           param="prompt")
    expect("a prompt longer than the context", 400, "POST", "/v1/completions",
           completion({"prompt": "word " * (context * 2)}), param="prompt", code="context_length_exceeded")
    expect("a chat longer than the context", 400, "POST", "/v1/chat/completions",
           {"messages": [{"role": "user", "content": "word " * (context * 2)}]}, param="messages",
           code="context_length_exceeded")
    expect("invalid UTF-8", 400, "POST", "/v1/completions", b'{"prompt": "caf\xc3 \xff"}')
    expect("a lone surrogate", 400, "POST", "/v1/completions", b'{"prompt": "\\udc00"}')
    expect("another model", 404, "POST", "/v1/completions", completion({"model": "gpt-4o"}), param="model",
           code="model_not_found")
    expect("logprobs", 400, "POST", "/v1/chat/completions",
           {"messages": [{"role": "user", "content": "x"}], "logprobs": True, "top_logprobs": 3}, param="logprobs")
    expect("unknown route", 404, "GET", "/v1/engines")
    check(request("GET", f"/v1/models/{model}")[1].get("id") == model, "GET /v1/models/ID: not the model")
    expect("another model's entry", 404, "GET", "/v1/models/gpt-4o", code="model_not_found")
    expect("wrong method", 405, "GET", "/v1/completions")
    expect("wrong method on /health", 405, "POST", "/health", b"{}")
    answer = expect("unknown fields", 200, "POST", "/v1/completions",
                    completion({"user": "u", "frequency_penalty": 0, "store": False, "metadata": {"a": "b"},
                                "stream_options": None, "something": [1, {"x": None}]}))
    check(isinstance(answer, dict) and isinstance(answer["choices"][0]["text"], str), f"unknown fields: {answer}")
    huge_body()
    raw = raw_exchange(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       + b"100000\r\n" + b"a" * 65536, read_timeout=io_timeout + 5)
    check(status_of(raw) == 411, f"a chunked body: {raw[:200] if raw else raw!r}")
    raw = raw_exchange(b"NOT HTTP AT ALL\r\n\r\n", read_timeout=io_timeout + 5)
    check(raw is not None, "a request line that is no HTTP: the connection stayed open")
    health = expect("health", 200, "GET", "/health")
    check(health.get("status") == "ok", f"health: {health}")

    half.join()
    check(half_sent.get("raw") is not None and half_sent["seconds"] < io_timeout + 8,
          f"half a request: held {half_sent.get('seconds')} s with --io-timeout {io_timeout}")
    never_reads.close()
    # And after all that, a good request still succeeds, whole and streamed.
    answer = expect("a good request afterwards", 200, "POST", "/v1/completions", completion({"max_tokens": 5}))
    check(answer.get("usage", {}).get("completion_tokens", 0) >= 1, f"good request: {answer}")
    status, text = request("POST", "/v1/chat/completions",
                           {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5, "stream": True})
    check(status == 200 and isinstance(text, str) and text.endswith("data: [DONE]\n\n"),
          f"a good stream afterwards: {status} {str(text)[-200:]}")


def crowd():
    """32 clients x 10 requests of mixed lengths and kinds, all answered in full."""
    def client(number):
        generator = random.Random(number)
        for index in range(10):
            max_tokens = generator.choice([1, 3, 8, 20, 40])
            stream = generator.random() < 0.4
            if generator.random() < 0.5:
                path, body = "/v1/completions", completion({"prompt": "abc " * generator.randint(1, 12),
                                                            "max_tokens": max_tokens, "stream": stream})
            else:
                path, body = "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi " * generator.randint(1, 8)}],
                                                      "max_tokens": max_tokens, "stream": stream,
                                                      "temperature": generator.choice([0, 0.7])}
            try:
                status, answer = request("POST", path, body)
            except OSError as error:
                check(False, f"client {number} request {index}: {error!r}")
                continue
            if stream:
                check(status == 200 and isinstance(answer, str) and answer.endswith("data: [DONE]\n\n"),
                      f"client {number} request {index}: stream {status} {str(answer)[-200:]}")
            else:
                check(status == 200 and isinstance(answer, dict) and 0 <= answer["usage"]["completion_tokens"] <= max_tokens,
                      f"client {number} request {index}: {status} {str(answer)[:200]}")

    threads = [threading.Thread(target=client, args=(number,)) for number in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def streams(count):
    """Clients streaming again and again until the server is gone; prints 'streaming' once they are under way."""
    started = threading.Event()

    def client():
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                connection.request("POST", "/v1/completions", body=json.dumps(
                    completion({"max_tokens": context - 8, "stream": True, "prompt": "Once"})),
                    headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                started.set()
                while response.read(64):
                    pass
                connection.close()
            except OSError:
                return
            except http.client.HTTPException:
                return

    for _ in range(count):
        threading.Thread(target=client, daemon=True).start()
    started.wait(30)
    print("streaming", flush=True)
    while True:  # until the server goes away: the test ends this script
        time.sleep(1)


def gone():
    """Clients that take the first chunk of a long stream and leave; the server must cancel their replies."""
    for _ in range(3):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        body = json.dumps(completion({"max_tokens": context - 8, "stream": True, "prompt": "F"})).encode()
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        received = b""
        while b"data: " not in received:
            received += sock.recv(4096)
        sock.close()
    for _ in range(100):  # the engine drops them at its next step
        status, health = request("GET", "/health")
        if health.get("active") == 0:
            break
        time.sleep(0.05)
    check(health.get("active") == 0, f"the clients that left still have sequences: {health}")
    answer = expect("a good request afterwards", 200, "POST", "/v1/completions", completion({"max_tokens": 3, "prompt": "F"}))
    check(isinstance(answer, dict) and "choices" in answer, f"good request: {answer}")


def busy():
    """More requests than places and queue: the rest are 503 with Retry-After, the others answered."""
    results = []

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("POST", "/v1/completions", body=json.dumps(completion({"max_tokens": context - 8, "prompt": "F"})),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        with lock:
            results.append((response.status, response.getheader("Retry-After"), answer))

    threads = [threading.Thread(target=client) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(status for status, _, _ in results)
    check(statuses.count(200) >= 2 and statuses.count(503) >= 1 and set(statuses) == {200, 503},
          f"6 requests, 1 place, 1 queued: {statuses}")
    for status, retry_after, answer in results:
        if status == 503:
            check(retry_after == "1" and answer["error"]["type"] == "server_error", f"503: {retry_after} {answer}")
    check(request("POST", "/v1/completions", completion({"max_tokens": 2, "prompt": "F"}))[0] == 200,
          "a request once the crowd has gone: not 200")


def key(api_key):
    """A refused request leaves its kept-alive connection fit for the next one."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = json.dumps(completion({"max_tokens": 2}))
    statuses = []
    for authorization in ["Bearer wrong", f"Bearer {api_key}", "", f"bearer {api_key}"]:
        connection.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json",
                                                                          "Authorization": authorization})
        response = connection.getresponse()
        answer = json.loads(response.read())
        statuses.append(response.status)
        if response.status == 401:
            check(answer["error"]["code"] == "invalid_api_key", f"401 without OpenAI's code: {answer}")
    check(statuses == [401, 200, 401, 200], f"one connection, wrong key, key, none, key: {statuses}")


if mode == "hostile":
    hostile()
elif mode == "crowd":
    crowd()
elif mode == "gone":
    gone()
elif mode == "busy":
    busy()
elif mode == "key":
    key(sys.argv[6])
else:
    streams(int(sys.argv[6]))
sys.exit(1 if failures else 0)
