"""A Warren service in Python with pika, written from docs/protocol.md alone.

Declares its queues as the protocol's table says, announces itself on the
control exchange, answers on each caller's reply queue and acks only after
the reply is published, drops expired requests with -32001, answers invalid
bodies and dead-letters them, and honours cancel messages from NS.cancel
(the running call is answered -32003; one not started yet is answered -32003
without running).

Handlers run in threads so the connection keeps reading (cancels among
them) while they work; every AMQP operation stays on the connection's own
thread through add_callback_threadsafe.
"""
import decimal
import json
import re
import threading
import time
import uuid

import pika

DEFAULT_TIMEOUT_MS = 30000


class RpcError(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def as_object(self):
        err = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class Context:
    """What a handler gets: its call id, deadline, and a cancellation event it should watch."""

    def __init__(self, call_id, deadline_ms):
        self.call_id = call_id
        self.deadline_ms = deadline_ms
        self.stop = threading.Event()
        self.reason = None

    def abort(self, reason):
        if not self.stop.is_set():
            self.reason = reason
            self.stop.set()

    def sleep(self, seconds):
        """Sleeps, or returns early (False) when the call is cancelled or past its deadline."""
        return not self.stop.wait(seconds)


class RawNumber(str):
    """A number's JSON text as received: ids are echoed byte-for-byte (docs/protocol.md, "Requests").

    Python's json would turn 1.50 into 1.5, -0 into 0 and 1E2 into 100.0; a request id that is a
    number is kept as its text instead, and written back as that text (encode_response).
    """


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")  # json.loads accepts NaN and Infinity unless told not to


def parse_request(body):
    """The decoded body (None when it is not JSON), with a number id replaced by its RawNumber text."""
    try:
        message = json.loads(body, parse_constant=reject_constant)
    except ValueError:
        return None
    if isinstance(message, dict) and isinstance(message.get("id"), (int, float)) and not isinstance(message.get("id"), bool):
        # A second parse that keeps every number's text; only the id is taken from it.
        message["id"] = json.loads(body, parse_int=RawNumber, parse_float=RawNumber)["id"]
    return message


def encode_response(response):
    """The response's JSON bytes, a RawNumber id written as the very text it came as."""
    if isinstance(response, list):
        return json.dumps(response).encode()
    rid = response.get("id")
    if not isinstance(rid, RawNumber):
        return json.dumps(response).encode()
    rest = json.dumps({k: v for k, v in response.items() if k != "id"})
    return f'{rest[:-1]}, "id": {rid}}}'.encode()


def deadline_passed(request_id):
    return {"jsonrpc": "2.0", "error": {"code": -32001, "message": "Deadline exceeded", "data": {"reason": "deadline_passed"}}, "id": request_id}


def expired_answer(message, request_id):
    """The answer to a body whose deadline had passed: -32001 for a request (its id) or an unreadable
    body (id null), one per request entry for a batch, nothing for notifications."""
    if isinstance(message, list):
        entries = [deadline_passed(e.get("id")) for e in message if isinstance(e, dict) and "id" in e]
        return entries or None
    if isinstance(message, dict) and "method" in message and "id" not in message:
        return None
    return deadline_passed(request_id)


def deadline_header(headers):
    """x-warren-deadline as docs/protocol.md, "Deadlines", says: any AMQP integer or float, a decimal (D,
    which pika reads as decimal.Decimal), or a string of digits only ("1e3", "0x10", "-5" are not
    deadlines). A timestamp (T, a datetime in pika: seconds, not milliseconds) and every other type
    are ignored."""
    value = (headers or {}).get("x-warren-deadline")
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,16}", value):
        return float(value)
    return None


class WarrenService:
    def __init__(self, url, name, methods, namespace="warren", prefetch=8, announce_interval_ms=10000, user_id=None):
        self.url, self.name, self.methods, self.ns = url, name, methods, namespace
        # The RabbitMQ user of `url`, when each service has its own (docs/security.md): stamped on every
        # reply as user_id, which RabbitMQ checks, so callers can tell this service's answers from forgeries.
        self.user_id = user_id
        self.instance_id = uuid.uuid4().hex[:12]
        self.prefetch = prefetch
        self.interval_ms = announce_interval_ms
        self.started_at = int(time.time() * 1000)
        self.running = {}  # call id -> Context
        self.cancelled = {}  # call id -> remember until (ms)
        self.stopping = False

    # --- topology -----------------------------------------------------------------------------
    def declare(self):
        ns, ch = self.ns, self.ch
        for name, kind in (("rpc", "direct"), ("events", "direct"), ("dlx", "direct"), ("control", "fanout"), ("cancel", "fanout")):
            ch.exchange_declare(f"{ns}.{name}", kind, durable=True)
        queue = f"{ns}.svc.{self.name}"
        ch.queue_declare(queue, durable=True, arguments={"x-queue-type": "classic", "x-dead-letter-exchange": f"{ns}.dlx", "x-dead-letter-routing-key": self.name})
        ch.queue_declare(f"{queue}.dead", durable=True, arguments={"x-queue-type": "classic", "x-max-length": 10000})
        ch.queue_bind(f"{queue}.dead", f"{ns}.dlx", self.name)
        for method in self.methods:
            ch.queue_bind(queue, f"{ns}.rpc", method)
        cancel_queue = f"{ns}.cancel.{self.name}.{self.instance_id}"
        ch.queue_declare(cancel_queue, exclusive=True, auto_delete=True, arguments={"x-max-length": 10000})
        ch.queue_bind(cancel_queue, f"{ns}.cancel", "")
        ch.basic_qos(prefetch_count=self.prefetch)
        ch.basic_consume(cancel_queue, self.on_cancel, auto_ack=True)
        self.request_tag = ch.basic_consume(queue, self.on_request, auto_ack=False)

    # --- discovery ----------------------------------------------------------------------------
    def announcement(self):
        return {
            "v": 1, "type": "announce", "service": self.name, "instanceId": self.instance_id,
            "startedAt": self.started_at, "intervalMs": self.interval_ms,
            "methods": [{"name": n, **({"description": m.__doc__.strip()} if m.__doc__ else {})} for n, m in self.methods.items()],
            "notifications": [], "instanceNotifications": [], "metadata": {"language": "python"},
            "running": len(self.running),
        }

    def announce(self, message=None):
        body = json.dumps(message or self.announcement()).encode()
        props = pika.BasicProperties(content_type="application/json", expiration=str(self.interval_ms * 3))
        self.ch.basic_publish(f"{self.ns}.control", "", body, props)
        if message is None and not self.stopping:
            self.conn.call_later(self.interval_ms / 1000, self.announce)

    # --- cancel -------------------------------------------------------------------------------
    def on_cancel(self, _ch, _method, _props, body):
        try:
            msg = json.loads(body)
        except ValueError:
            return
        if not isinstance(msg, dict) or msg.get("type") != "cancel" or msg.get("v", 1) != 1:
            return
        call_id = msg.get("callId")
        if not isinstance(call_id, str) or not call_id:
            return
        ctx = self.running.get(call_id)
        if ctx is not None:
            ctx.abort("cancelled")
        else:
            now = time.time() * 1000
            deadline = msg.get("deadline") if isinstance(msg.get("deadline"), (int, float)) else now + 60000
            self.cancelled[call_id] = min(deadline, now + 60000)
            if len(self.cancelled) > 10000:
                self.cancelled.pop(next(iter(self.cancelled)))

    # --- requests -----------------------------------------------------------------------------
    def on_request(self, ch, method, props, body):
        now = time.time() * 1000
        call_id = props.correlation_id or f"anon.{method.delivery_tag}"
        header = deadline_header(props.headers)
        deadline = header if header is not None else now + DEFAULT_TIMEOUT_MS
        message = parse_request(body)
        request_id = message.get("id") if isinstance(message, dict) and isinstance(message.get("id"), (str, int, float)) else None
        if deadline <= now:
            # Not run, acked, answered -32001 whatever the body is (docs/protocol.md, "Services", step 1).
            answer = expired_answer(message, request_id)
            if answer is not None:
                self.reply(props, answer)
            ch.basic_ack(method.delivery_tag)
            return
        if message is None:
            self.reply(props, {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None})
            ch.basic_nack(method.delivery_tag, requeue=False)  # dead-lettered to NS.svc.<name>.dead
            return
        if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str)):
            self.reply(props, {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": request_id})
            ch.basic_nack(method.delivery_tag, requeue=False)
            return
        until = self.cancelled.pop(call_id, None)
        if until is not None and until >= now:
            self.reply(props, {"jsonrpc": "2.0", "error": {"code": -32003, "message": "Cancelled"}, "id": request_id})
            ch.basic_ack(method.delivery_tag)
            return
        ctx = Context(call_id, deadline)
        self.running[call_id] = ctx
        timer = threading.Timer(max(0, (deadline - now) / 1000), ctx.abort, args=("deadline",))
        timer.daemon = True
        timer.start()
        worker = threading.Thread(target=self.run, args=(message, props, method.delivery_tag, ctx, timer), daemon=True)
        worker.start()

    def run(self, message, props, tag, ctx, timer):
        has_id = "id" in message
        try:
            handler = self.methods.get(message["method"])
            if handler is None:
                raise RpcError(-32601, "Method not found")
            result = handler(message.get("params"), ctx)
            if ctx.reason == "cancelled":
                raise RpcError(-32003, "Cancelled")
            if ctx.reason == "deadline":
                raise RpcError(-32001, "Deadline exceeded")
            response = {"jsonrpc": "2.0", "result": result, "id": message.get("id")}
        except RpcError as err:
            response = {"jsonrpc": "2.0", "error": err.as_object(), "id": message.get("id")}
        except Exception as err:  # a handler's bug is an error reply, never a requeue loop
            response = {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error", "data": {"detail": str(err)}}, "id": message.get("id")}
        timer.cancel()

        def finish():
            self.running.pop(ctx.call_id, None)
            if has_id:
                self.reply(props, response)
            self.ch.basic_ack(tag)  # only after the reply is published, on the same channel

        self.conn.add_callback_threadsafe(finish)

    def reply(self, props, response):
        if not props.reply_to:
            return
        out = pika.BasicProperties(content_type="application/json", correlation_id=props.correlation_id, user_id=self.user_id)
        self.ch.basic_publish("", props.reply_to, encode_response(response), out)

    # --- life ---------------------------------------------------------------------------------
    def serve(self, ready=None):
        params = pika.URLParameters(self.url)
        params.heartbeat = 10  # recommended, not required (pika sets TCP_NODELAY on its sockets itself)
        self.conn = pika.BlockingConnection(params)
        self.ch = self.conn.channel()
        self.declare()
        self.announce()
        if ready:
            ready()
        while not self.stopping:
            self.conn.process_data_events(time_limit=0.1)
        self.ch.basic_cancel(self.request_tag)
        deadline = time.time() + 5
        while self.running and time.time() < deadline:
            self.conn.process_data_events(time_limit=0.05)
        self.announce({"v": 1, "type": "withdraw", "service": self.name, "instanceId": self.instance_id})
        self.conn.close()

    def stop(self):
        self.stopping = True
