"""A Warren client in Python with pika, written from docs/protocol.md alone.

Calls, batches, notifications and cancels, with the recommended named reply
queue, `mandatory` publishes whose `basic.return` answers -32601, publisher
confirms, deadlines on the wire, and consume loops that end.
"""
import json
import time
import secrets
import uuid

import pika

PROTOCOL = 1
PROTOCOL_MINOR = 1  # v1.1: x-warren-protocol-minor (docs/protocol.md, "Versions")


def error(code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return err


class WarrenClient:
    def __init__(self, url, namespace="warren"):
        self.ns = namespace
        self.client_id = uuid.uuid4().hex[:12]
        self.answers = {}
        self.conn = pika.BlockingConnection(pika.URLParameters(url))
        self.ch = self.conn.channel()
        for name, kind in (("rpc", "direct"), ("events", "direct"), ("dlx", "direct"), ("control", "fanout"), ("cancel", "fanout")):
            self.ch.exchange_declare(f"{namespace}.{name}", kind, durable=True)
        # The recommended reply queue: named, not exclusive, expiring 60 s after its consumer left.
        self.reply_queue = f"{namespace}.reply.{self.client_id}"
        # Durable with x-expires, not exclusive (it outlives a reconnect): RabbitMQ 4.3 refuses a queue that is
        # neither durable nor exclusive (docs/protocol.md, "Queues").
        self.ch.queue_declare(self.reply_queue, durable=True, exclusive=False, auto_delete=False, arguments={"x-expires": 60000})
        self.ch.add_on_return_callback(self._returned)
        self.ch.confirm_delivery()
        self.tag = self.ch.basic_consume(self.reply_queue, self._reply, auto_ack=False)

    def _returned(self, _ch, _method, props, _body):
        # No queue is bound for the method: nobody serves it.
        self.answers.setdefault(props.correlation_id, {"jsonrpc": "2.0", "error": error(-32601, "Method not found"), "id": None})

    def _reply(self, ch, method, props, body):
        ch.basic_ack(method.delivery_tag)
        self.answers[props.correlation_id] = json.loads(body)

    def next_call_id(self):
        # 128 random bits, never a counter: a service that saw one of our requests must not be able
        # to predict the ids of our next calls and answer them first (docs/security.md).
        return f"{self.client_id}.{secrets.token_urlsafe(16)}"

    def send(self, message, timeout=5.0, routing_key=None, persistent=False):
        """Publishes one request (or a raw batch) and returns (call id, deadline) without waiting for the answer."""
        call_id = self.next_call_id()
        deadline = int(time.time() * 1000 + timeout * 1000)
        props = pika.BasicProperties(
            content_type="application/json", correlation_id=call_id, reply_to=self.reply_queue,
            expiration=str(int(timeout * 1000)), delivery_mode=2 if persistent else 1,
            headers={"x-warren-protocol": PROTOCOL, "x-warren-protocol-minor": PROTOCOL_MINOR, "x-warren-deadline": deadline})
        key = routing_key or message["method"]
        try:
            self.ch.basic_publish(f"{self.ns}.rpc", key, json.dumps(message).encode(), props, mandatory=True)
        except pika.exceptions.UnroutableError:
            self.answers.setdefault(call_id, {"jsonrpc": "2.0", "error": error(-32601, "Method not found"), "id": message.get("id") if isinstance(message, dict) else None})
        except pika.exceptions.NackError:
            self.answers.setdefault(call_id, {"jsonrpc": "2.0", "error": error(-32002, "Service unavailable"), "id": None})
        return call_id, deadline

    def wait(self, call_id, deadline, request_id=None):
        """Waits for the answer to call_id until its deadline; -32001 when none came."""
        while call_id not in self.answers:
            left = deadline / 1000 - time.time()
            if left <= 0:
                return {"jsonrpc": "2.0", "error": error(-32001, "Deadline exceeded"), "id": request_id}
            self.conn.process_data_events(time_limit=min(left, 0.05))
        answer = self.answers.pop(call_id)
        if isinstance(answer, dict) and answer.get("id") is None and "error" in answer and request_id is not None and answer["error"]["code"] == -32601:
            answer["id"] = request_id
        return answer

    def request(self, method, params=None, id=1, timeout=5.0, persistent=False):
        """The full JSON-RPC response to one call."""
        message = {"jsonrpc": "2.0", "method": method, "id": id}
        if params is not None:
            message["params"] = params
        call_id, deadline = self.send(message, timeout, persistent=persistent)
        return self.wait(call_id, deadline, id)

    def batch(self, entries, timeout=5.0):
        """As the reference client does: each request on its own, in parallel; answers in request order."""
        sent = []
        for i, (method, params, is_notification) in enumerate(entries):
            if is_notification:
                self.notify(method, params)
                sent.append(None)
            else:
                sent.append((self.send({"jsonrpc": "2.0", "method": method, "params": params, "id": i}, timeout), i))
        return [None if s is None else self.wait(s[0][0], s[0][1], s[1]) for s in sent]

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        props = pika.BasicProperties(content_type="application/json", message_id=self.next_call_id(), headers={"x-warren-protocol": PROTOCOL, "x-warren-protocol-minor": PROTOCOL_MINOR})
        self.ch.basic_publish(f"{self.ns}.events", method, json.dumps(message).encode(), props)

    def cancel(self, call_id, deadline=None, reason="python client"):
        """Publishes a cancel message (docs/schemas/cancel.schema.json) to NS.cancel."""
        body = {"v": 1, "type": "cancel", "callId": call_id, "reason": reason}
        ttl = 60000
        if deadline is not None:
            body["deadline"] = deadline
            ttl = max(1, min(60000, int(deadline - time.time() * 1000)))
        props = pika.BasicProperties(content_type="application/json", expiration=str(ttl))
        self.ch.basic_publish(f"{self.ns}.cancel", "", json.dumps(body).encode(), props)

    def close(self):
        try:
            self.ch.basic_cancel(self.tag)
            self.ch.queue_delete(self.reply_queue)
        finally:
            self.conn.close()
