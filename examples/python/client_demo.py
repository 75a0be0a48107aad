"""Runs the Python client against a Warren service that serves add, fail and sleep
(test/integration/python.int.test.ts starts a TypeScript one), checking every
answer. Exits 0 when all hold; prints one line per check.

usage: client_demo.py AMQP_URL NAMESPACE
"""
import sys
import time

from warren_client import WarrenClient

failures = []


def check(name, ok, got):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {got}"), flush=True)
    if not ok:
        failures.append(name)


def main():
    url, namespace = sys.argv[1], sys.argv[2]
    c = WarrenClient(url, namespace)
    try:
        r = c.request("add", [4, 5])
        check("call add [4, 5] = 9", r == {"jsonrpc": "2.0", "result": 9, "id": 1}, r)
        r = c.request("add", {"a": 2, "b": 3}, id="by-name")
        check("call add by name = 5, string id echoed", r.get("result") == 5 and r.get("id") == "by-name", r)
        r = c.request("add", [1, 1], id=9007199254740993)
        check("id 9007199254740993 echoed exactly", r.get("id") == 9007199254740993 and r.get("result") == 2, r)
        r = c.request("add", ["x", 1])
        check("invalid params answer -32602 with a list of problems", r.get("error", {}).get("code") == -32602 and isinstance(r["error"].get("data"), list), r)
        r = c.request("fail", [])
        check("a handler error is an error reply", "error" in r and r["error"]["code"] not in (-32601, -32001), r)
        r = c.request("python.nobody.serves.this", [])
        check("an unrouted method answers -32601 (basic.return)", r.get("error", {}).get("code") == -32601, r)
        started = time.time()
        r = c.request("sleep", [3000], timeout=0.5)
        check("a call past its deadline answers -32001 at the deadline", r.get("error", {}).get("code") == -32001 and time.time() - started < 2.5, r)
        answers = c.batch([("add", [1, 2], False), ("tick", {}, True), ("add", [3, 4], False)])
        check("a batch answers in request order, nothing for its notification",
              [a and a.get("result") for a in answers] == [3, None, 7], answers)
        # A Python-side cancel stops the call where it runs; its caller (here) gets -32003.
        call_id, deadline = c.send({"jsonrpc": "2.0", "method": "sleep", "params": [20000], "id": "long"}, timeout=25)
        time.sleep(0.5)
        c.cancel(call_id, deadline)
        started = time.time()
        r = c.wait(call_id, deadline, "long")
        check("a cancel from Python stops the call: -32003", r.get("error", {}).get("code") == -32003 and time.time() - started < 5, r)
        print(f"cancelled call id {call_id}", flush=True)
    finally:
        c.close()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
