"""Patches of moto behaviour (filled below)."""



def lambda_code_location() -> None:
    """GetFunction's Code.Location serves the function's zip, as the presigned URL does on AWS.

    moto answers with an amazonaws.com address that nothing serves, so code deployed to the
    emulator could not be read back; the local function host (fanout.host) downloads it from
    Code.Location. The zip is served under the emulator's own /moto-api/ namespace (routed by
    path, no signature needed), on the host and port the client used.
    """
    import json
    from urllib.parse import quote, unquote

    from moto.awslambda.models import lambda_backends
    from moto.awslambda.responses import LambdaResponse
    from moto.moto_api._internal import urls

    def serve_code(request, full_url, headers):
        account, region, name = full_url.split("?")[0].rsplit("/", 3)[1:]
        function = lambda_backends[account][region].get_function(unquote(name))
        return 200, {"Content-Type": "application/zip"}, function.code_bytes

    route = "{0}/moto-api/lambda-code/(?P<account>[^/]+)/(?P<region>[^/]+)/(?P<name>[^/?]+)$"
    urls.url_paths[route] = serve_code
    get_function = LambdaResponse.get_function

    def get_function_with_location(self):
        body = json.loads(get_function(self))
        if body.get("Code", {}).get("RepositoryType") == "S3":
            name = quote(body["Configuration"]["FunctionName"], safe="")
            body["Code"]["Location"] = (f"http://{self.headers['Host']}/moto-api/lambda-code/"
                                        f"{self.current_account}/{self.region}/{name}")
        return json.dumps(body)

    LambdaResponse.get_function = get_function_with_location


PATCHES = (lambda_code_location,)


def apply_all() -> None:
    for patch in PATCHES:
        patch()
