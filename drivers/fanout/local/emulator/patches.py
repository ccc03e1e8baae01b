"""Every change this project makes to moto's behaviour, where the project depends on AWS's.

Each patch is one small function, listed in PATCHES, applied by the emulator server process
before it serves, and covered by a test under tests/emulator that fails without it. `--stock`
skips them all (the benchmark baseline). docs/emulator.md gives each patch's reason, what it
was measured to change, and what was checked and left alone.
"""

import json
import threading
from urllib.parse import unquote, urlparse

import xmltodict
from moto import backends
from moto.awslambda import responses as lambda_responses
from moto.awslambda.exceptions import UnknownFunctionException
from moto.awslambda.models import LambdaBackend, LambdaFunction, lambda_backends
from moto.core.authorization import ActionAuthenticatorMixin
from moto.core.utils import unix_time, unix_time_millis
from moto.iam.access_control import AssumedRoleAccessKey, IAMPolicy, PermissionResult
from moto.moto_api._internal import urls as moto_api_urls
from moto.s3.exceptions import MissingKey, S3AccessDeniedError
from moto.s3.models import FakeBucket, FakeKey
from moto.s3.responses import S3Response
from moto.sqs.exceptions import ReceiptHandleIsInvalid
from moto.sqs.models import Queue, SQSBackend
from moto.sts.models import sts_backends
from moto.utilities.utils import get_partition

LAMBDA_CODE_PATH = "/moto-api/fanout/lambda-code"
SECURE = "aws:SecureTransport"
# Bytes of an object read and sent at a time by gets_send_the_key_as_read: a few socket buffers
# worth, so the first is sent after a read of well under a millisecond.
CHUNK = 256 * 2**10
# The counters GetQueueAttributes computes by walking the queue: attribute -> Queue property.
COUNTERS = {
    "ApproximateNumberOfMessages": "approximate_number_of_messages",
    "ApproximateNumberOfMessagesDelayed": "approximate_number_of_messages_delayed",
    "ApproximateNumberOfMessagesNotVisible": "approximate_number_of_messages_not_visible",
}


def compact_redrive_policy() -> None:
    """GetQueueAttributes returns RedrivePolicy as compact JSON, as AWS does."""
    stock_attributes = Queue.attributes.fget  # type: ignore[attr-defined]  # a property, typed as its getter

    def attributes(queue):
        result = stock_attributes(queue)
        if "RedrivePolicy" in result:
            result["RedrivePolicy"] = json.dumps(queue.redrive_policy, separators=(",", ":"))
        return result

    Queue.attributes = property(attributes)


def queue_counters_only_when_asked() -> None:
    """Queue.attributes no longer counts the messages (three scans of the queue); only
    GetQueueAttributes adds the counters, when asked for them or for All. Stock moto builds every
    attribute whenever it reads one (SendMessage reads ContentBasedDeduplication, ReceiveMessage
    reads MessageRetentionPeriod per message), so each message cost several scans."""
    stock_get_queue_attributes = SQSBackend.get_queue_attributes
    Queue.BASE_ATTRIBUTES = [name for name in Queue.BASE_ATTRIBUTES if name not in COUNTERS]

    def get_queue_attributes(backend, queue_name, attribute_names):
        others = [name for name in attribute_names if name not in COUNTERS]
        result = stock_get_queue_attributes(backend, queue_name, others)
        queue = backend.get_queue(queue_name)
        for name, counter in COUNTERS.items():
            if name in attribute_names or "All" in attribute_names:
                result[name] = getattr(queue, counter)
        return result

    SQSBackend.get_queue_attributes = get_queue_attributes


def queue_scans_read_clock_once() -> None:
    """Scans of a queue compare each message with one clock reading instead of reading the
    clock (through datetime) twice per message. Same conditions as Message.visible/delayed."""

    def messages(queue):
        now = unix_time_millis()
        return [m for m in queue._messages if m.visible_at < now and not now < m.delayed_until]

    def not_visible(queue):
        now = unix_time_millis()
        return sum(1 for m in queue._messages if not m.visible_at < now)

    def delayed(queue):
        now = unix_time_millis()
        return sum(1 for m in queue._messages if now < m.delayed_until)

    Queue.messages = property(messages)
    Queue.approximate_number_of_messages_not_visible = property(not_visible)
    Queue.approximate_number_of_messages_delayed = property(delayed)


def retention_check_reads_attribute() -> None:
    """ReceiveMessage checks each message it returns against the retention period; stock moto
    goes through GetQueueAttributes (building every attribute three times) to read that one."""

    def is_valid(backend, queue_name, message):
        retention_period = backend.get_queue(queue_name).message_retention_period
        return retention_period + message.sent_timestamp / 1000 > unix_time()

    SQSBackend.is_message_valid_based_on_retention_period = is_valid


def delete_message_in_one_pass() -> None:
    """DeleteMessage finds the message in one pass over the queue instead of two passes that
    each build a list of receipt handles per message. Same rules: any receipt handle the
    message ever had deletes it, deleting twice is fine, an unknown handle is an error."""

    def delete_message(queue, receipt_handle):
        if receipt_handle in queue.deleted_messages:
            return
        for index, message in enumerate(queue._messages):
            if message.receipt_handle == receipt_handle or (
                receipt_handle in message._old_receipt_handles
            ):
                # Rebind rather than mutate, as stock moto does: a concurrent scan of the old
                # list stays consistent.
                queue._messages = queue._messages[:index] + queue._messages[index + 1 :]
                queue.pending_messages.discard(message)
                queue.deleted_messages.update(message.all_receipt_handles)
                return
        raise ReceiptHandleIsInvalid()

    Queue.delete_message = delete_message


def receives_never_share_a_message() -> None:
    """One ReceiveMessage scan at a time, so a visible message is handed to one receiver only.

    The stock call is run without its long poll (wait 0) under the lock; waiting for messages
    happens outside it, on the queue's own condition, so long polls do not block each other.
    """
    stock_receive = SQSBackend.receive_message
    scan_lock = threading.Lock()

    def receive_message(backend, queue_name, count, wait_seconds_timeout, visibility_timeout, *rest):
        deadline = unix_time() + wait_seconds_timeout
        while True:
            with scan_lock:
                result = stock_receive(backend, queue_name, count, 0, visibility_timeout, *rest)
            remaining = deadline - unix_time()
            if result or remaining <= 0:
                return result
            backend.get_queue(queue_name).wait_for_messages(min(1, remaining))

    SQSBackend.receive_message = receive_message


def lambda_code_location_served_locally() -> None:
    """GetFunction's Code.Location points at the emulator, which serves the deployed zip."""
    stock_get_function = lambda_responses.LambdaResponse.get_function

    def get_function(response):
        body = json.loads(stock_get_function(response))
        if body.get("Code", {}).get("RepositoryType") == "S3":
            config = body["Configuration"]
            account, region = response.current_account, response.region
            name, version = config["FunctionName"], config["Version"]
            host = response.headers.get("Host")
            body["Code"]["Location"] = (
                f"http://{host}{LAMBDA_CODE_PATH}/{account}/{region}/{name}/{version}"
            )
        return json.dumps(body)

    def serve_code(request, full_url, headers):
        *_, account, region, name, version = full_url.split("?")[0].rstrip("/").split("/")
        backend = lambda_backends[account][region]
        try:
            function = backend.get_function(name, None if version == "$LATEST" else version)
        except UnknownFunctionException:
            return 404, {}, f"no function {name} version {version} in {account}/{region}"
        return 200, {"Content-Type": "application/zip"}, function.code_bytes

    lambda_responses.LambdaResponse.get_function = get_function
    route = "/(?P<account>[^/]+)/(?P<region>[^/]+)/(?P<name>[^/]+)/(?P<version>[^/]+)$"
    moto_api_urls.url_paths["{0}" + LAMBDA_CODE_PATH + route] = serve_code


def mappings_listed_by_function_name_or_arn() -> None:
    """ListEventSourceMappings finds a function's mappings whether FunctionName is its name
    or its ARN, as AWS does; moto compares the text the mapping was created with."""
    stock_list = LambdaBackend.list_event_source_mappings

    def list_event_source_mappings(backend, event_source_arn, function_name):
        if not function_name:
            return stock_list(backend, event_source_arn, function_name)
        try:
            function_arn = backend.get_function(function_name).function_arn
        except UnknownFunctionException:
            return stock_list(backend, event_source_arn, function_name)
        mappings = stock_list(backend, event_source_arn, None)  # type: ignore[arg-type]  # None: every function's
        return [mapping for mapping in mappings if mapping.function_arn == function_arn]

    LambdaBackend.list_event_source_mappings = list_event_source_mappings


def reserved_concurrency_zero_reported() -> None:
    """GetFunction reports a reserved concurrency of 0, as it does any other value."""
    stock_get_code = LambdaFunction.get_code

    def get_code(function):
        code = stock_get_code(function)
        if function.reserved_concurrency is not None:
            code["Concurrency"] = {"ReservedConcurrentExecutions": int(function.reserved_concurrency)}
        return code

    LambdaFunction.get_code = get_code


def bucket_policies_see_secure_transport() -> None:
    """Bucket policy statements that apply only to plain-HTTP requests are skipped: the
    emulator's requests stand for TLS ones. Statements with any other condition are left to
    moto as they are."""

    def plain_http_only(statement):
        condition = statement.get("Condition")
        if not condition or list(condition) != ["Bool"] or list(condition["Bool"]) != [SECURE]:
            return False
        values = condition["Bool"][SECURE]
        return {str(v).lower() for v in (values if isinstance(values, list) else [values])} == {"false"}

    def get_permission(bucket, action, resource):
        if bucket.policy is None:
            return PermissionResult.NEUTRAL
        policy = json.loads(bucket.policy)
        statements = policy["Statement"]
        statements = statements if isinstance(statements, list) else [statements]
        policy["Statement"] = [st for st in statements if not plain_http_only(st)]
        return IAMPolicy(json.dumps(policy)).is_action_permitted(action, resource)

    FakeBucket.get_permission = get_permission


def role_session(response) -> bool:
    """Whether the request is signed with an access key that STS AssumeRole issued."""
    access_key = response.get_access_key()
    partition = get_partition(response.region)
    sts = sts_backends[response.current_account][partition]
    return sts.get_assumed_role_from_access_key(access_key) is not None


def role_allows(response, action: str, resource: str) -> bool:
    """Whether the policies of the role whose session signed the request allow `action` on
    `resource` (an explicit deny wins, as in IAM's evaluation)."""
    key = AssumedRoleAccessKey(response.current_account, get_partition(response.region),
                               response.get_access_key(), response.headers)
    results = {IAMPolicy(policy).is_action_permitted(action, resource) for policy in key.collect_policies()}
    return PermissionResult.PERMITTED in results and PermissionResult.DENIED not in results


def role_sessions_held_to_their_policies() -> None:
    """Requests signed with an assumed role's session credentials (the function's, which the
    host gets as Lambda does) are checked against that role's policies, as AWS checks every
    caller; every other caller (Terraform, fanout, tests, the host's queue polling and log
    delivery) keeps full access. Stock moto checks every request or none (after its first
    INITIAL_NO_AUTH_ACTION_COUNT requests). The session token must be the one issued with the
    key; the signature itself is not recomputed (the emulator authenticates nobody, and hashing
    every upload's body again would cost the rates the network model sets)."""

    def authenticate_and_authorize(response, iam_request_cls, resource="*"):
        if not role_session(response):
            return
        path = response.raw_path
        query = urlparse(response.uri).query
        request = iam_request_cls(
            account_id=response.current_account,
            method=response.method,
            path=f"{path}?{query}" if query else path,
            data=response.data,
            body=response.raw_body,
            headers=response.headers,
            action=response._get_action(),
        )
        request.check_action_permitted(resource)

    ActionAuthenticatorMixin._authenticate_and_authorize_action = authenticate_and_authorize


def missing_keys_hidden_without_list_bucket() -> None:
    """A role's GetObject or HeadObject of a key that does not exist answers 403 AccessDenied
    unless the role may s3:ListBucket on the bucket, as S3 does (GetObject API reference): only
    a caller who may list the bucket learns that a key is missing. Stock moto answers 404."""
    stock_key_response = S3Response._key_response

    def hidden(response, request) -> bool:
        return (request.method in ("GET", "HEAD") and response._get_action() == "GetObject"
                and role_session(response)
                and not role_allows(response, "s3:ListBucket", f"arn:aws:s3:::{response.bucket_name}"))

    def key_response(response, request, full_url):
        try:
            status, headers, body = stock_key_response(response, request, full_url)
        except MissingKey:
            if hidden(response, request):
                raise S3AccessDeniedError() from None
            raise
        if status == 404 and hidden(response, request):  # HEAD answers a missing key without raising
            raise S3AccessDeniedError()
        return status, headers, body

    S3Response._key_response = key_response


def copy_sources_authorized() -> None:
    """A role's CopyObject or UploadPartCopy needs s3:GetObject on its source as well as
    s3:PutObject on its target, as in S3 (CopyObject and UploadPartCopy API references,
    Permissions); moto checks the target only."""
    stock_key_response = S3Response._key_response

    def key_response(response, request, full_url):
        source = request.headers.get("x-amz-copy-source")
        if request.method == "PUT" and source and role_session(response):
            bucket_and_key = unquote(source.split("?", 1)[0]).lstrip("/")
            if not role_allows(response, "s3:GetObject", f"arn:aws:s3:::{bucket_and_key}"):
                raise S3AccessDeniedError()
        return stock_key_response(response, request, full_url)

    S3Response._key_response = key_response


def deletes_authorized_per_key() -> None:
    """A role's DeleteObjects is authorized key by key against s3:DeleteObject, as in S3
    (DeleteObjects API reference: the caller needs s3:DeleteObject on each object), so a role
    granted deletes under a prefix may delete a batch there. moto checks s3:DeleteObject on the
    bucket itself first and, refused, answers AccessDenied for every key. Here a batch whose keys
    the role may all delete goes on to moto's per-key checks (of the bucket policy); one with any
    key it may not delete keeps moto's answer (every key refused, where S3 refuses only those)."""
    stock_post = S3Response._bucket_response_post

    def allowed(response, bucket_name: str) -> bool:
        objects = xmltodict.parse(response.body).get("Delete", {}).get("Object", [])
        keys = [item["Key"] for item in (objects if isinstance(objects, list) else [objects])]
        return bool(keys) and all(role_allows(response, "s3:DeleteObject", f"arn:aws:s3:::{bucket_name}/{key}")
                                  for key in keys)  # fmt: skip

    def post(response, request, bucket_name):
        response.path = response._get_path(request)
        if (request.headers.get("Content-Length") and response.is_delete_keys() and role_session(response)
                and allowed(response, bucket_name)):  # fmt: skip
            response.data["Action"] = "DeleteObject"
            return response._bucket_response_delete_keys(bucket_name)
        return stock_post(response, request, bucket_name)

    S3Response._bucket_response_post = post


class KeyBody:
    """Bytes [start, stop) of a key's buffer where moto expects the key's bytes read whole: its
    length is theirs, a slice of it is a narrower KeyBody, and it yields them CHUNK bytes at a
    time, each read under the key's lock (as moto's own read is), for the server to send one
    before the next is read. Nothing is read until then."""

    def __init__(self, key: FakeKey, start: int = 0, stop: int | None = None):
        self.key, self.start = key, start
        self.stop = key.size if stop is None else stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, part: slice) -> "KeyBody":
        start, stop, step = part.indices(len(self))
        if step != 1:
            raise ValueError(f"only contiguous slices of a key's bytes can be read, not step {step}")
        return KeyBody(self.key, self.start + start, self.start + max(start, stop))

    def __iter__(self):
        for start in range(self.start, self.stop, CHUNK):
            yield self._read(start, min(start + CHUNK, self.stop))

    def read(self) -> bytes:
        return self._read(self.start, self.stop)

    def _read(self, start: int, stop: int) -> bytes:
        with self.key.lock:
            self.key._value_buffer.seek(start)
            return self.key._value_buffer.read(stop - start)


class UnreadKey:
    """The key as GetObject sees it, whose value is a KeyBody rather than the bytes read."""

    def __init__(self, key: FakeKey):
        self._key = key

    def __getattr__(self, name):
        return getattr(self._key, name)

    @property
    def value(self) -> KeyBody:
        return KeyBody(self._key)


def gets_send_the_key_as_read() -> None:
    """GetObject answers from a KeyBody, which moto's range handling slices (reading nothing)
    and werkzeug sends chunk by chunk as it reads it. Answers that moto builds otherwise (a
    304's text, errors) go out as before; a request not served over a socket (moto's
    in-process mock, whose stubber wants bytes) gets its bytes read at once."""
    stock_get_object = S3Response.get_object
    stock_key_response = S3Response.key_response

    def get_object(response):
        # One S3Response per request: this reaches only this request's GetObject.
        response._get_key = lambda: unread(*S3Response._get_key(response))
        return stock_get_object(response)

    def unread(key, not_modified):
        return UnreadKey(key), not_modified

    def key_response(response, request, *args, **kwargs):
        status, headers, body = stock_key_response(response, request, *args, **kwargs)
        if isinstance(body, KeyBody) and "werkzeug.socket" not in request.environ:
            body = body.read()
        return status, headers, body

    S3Response.get_object = get_object
    S3Response.key_response = key_response


def server_routing_lists_modules_once() -> None:
    """The server routes each request by checking its host against moto's service modules,
    which stock moto lists from the package directory (a listdir and ~180 stat calls) on every
    request. The installed modules cannot change while the server runs: list them once."""
    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules


PATCHES = (
    compact_redrive_policy,
    queue_counters_only_when_asked,
    queue_scans_read_clock_once,
    retention_check_reads_attribute,
    delete_message_in_one_pass,
    receives_never_share_a_message,
    lambda_code_location_served_locally,
    mappings_listed_by_function_name_or_arn,
    reserved_concurrency_zero_reported,
    bucket_policies_see_secure_transport,
    role_sessions_held_to_their_policies,
    missing_keys_hidden_without_list_bucket,
    copy_sources_authorized,
    deletes_authorized_per_key,
    gets_send_the_key_as_read,
    server_routing_lists_modules_once,
)


def apply_all() -> None:
    """Apply every patch; call once, before the server handles its first request."""
    for patch in PATCHES:
        patch()
