<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

/** The requests every parity test sends, by name; each case is one or more requests on fresh connections. */
final class ParityCases
{
    /** @return array<string, list<ParityRequest>> */
    public static function all(): array
    {
        $fields = ['title' => 'Holiday €', 'tags[]' => 'sea', 'note' => "two\r\nlines"];
        $files = [
            ['one', 'beach.txt', 'text/plain', "hello\r\n--not-the-boundary\r\n"],
            ['many[]', 'a.bin', 'application/octet-stream', "\x00\x01\x02binary\xff"],
            ['many[]', 'b.json', 'application/json', '{"b":2}'],
            ['none', '', 'application/octet-stream', ''],
            ['folder[]', 'photos/2024/x.jpg', 'image/jpeg', 'JPG'], // a folder upload: full_path keeps the folders
        ];
        return [
            'GET with a query string' => [ParityRequest::get('/dump.php?a=1&b[]=2&b[]=3&c=%20x%2By&empty=&flag&d[k][]=v')],
            'GET with custom request headers' => [ParityRequest::get(
                '/dump.php',
                'User-Agent: parity/1.0',
                'Accept: application/json',
                'Accept-Language: fr-CH, fr;q=0.9',
                'X-Custom-Header: custom value',
                'X-Forwarded-For: 203.0.113.7',
            )],
            'GET of HTTP/1.0' => [new ParityRequest('GET', '/dump.php?v=10', protocol: 'HTTP/1.0')],
            'POST urlencoded' => [ParityRequest::post(
                '/dump.php?q=1&only=get',
                'application/x-www-form-urlencoded',
                'a=1&b=two+words&arr[k]=v&arr[]=w&q=2&enc=%C3%A9%26',
            )],
            'POST JSON is only in php://input' => [ParityRequest::post('/dump.php', 'application/json', '{"json":true,"n":[1,2]}')],
            'PUT with a body' => [new ParityRequest('PUT', '/dump.php?put=1', [['Content-Type', 'text/plain']], "put body\n")],
            'multipart upload of fields and files' => [ParityRequest::multipart('/dump.php?up=1', $fields, $files)],
            'upload form handler moves the files' => [ParityRequest::multipart('/upload.php', $fields, $files)],
            'upload form handler shows its form' => [ParityRequest::get('/upload.php')],
            'Basic credentials' => [ParityRequest::get('/dump.php', 'Authorization: Basic ' . base64_encode('user:pa:ss'))],
            'Basic credentials with an empty password, in lower case' => [ParityRequest::get('/dump.php', 'Authorization: basic ' . base64_encode('user:'))],
            'Basic credentials without a colon' => [ParityRequest::get('/dump.php', 'Authorization: Basic ' . base64_encode('user'))],
            'Digest credentials' => [ParityRequest::get('/dump.php', 'Authorization: Digest username="user", realm="r", nonce="n", uri="/dump.php", response="x"')],
            'Bearer token' => [ParityRequest::get('/dump.php', 'Authorization: Bearer abc.def')],
            'cookies' => [ParityRequest::get('/dump.php', 'Cookie: a=1; b=two%20words; arr[x]=y; arr[y]=z; c=')],
            'PATH_INFO after the script name' => [ParityRequest::get('/sub/page.php/foo/a%20b?x=1')],
            'extensionless script' => [ParityRequest::get('/sub/page?x=1')],
            'extensionless script at the root' => [ParityRequest::get('/dump')],
            'front-controller fallback' => [ParityRequest::get('/no/such/page?x=2')],
            'directory index' => [ParityRequest::get('/?y=3')],
            'status set by the script' => [ParityRequest::get('/dump.php?status=201')],
            'Location set by the script' => [ParityRequest::get('/dump.php?location=/elsewhere')],
            'Location set by the script after a POST' => [ParityRequest::post('/dump.php?location=/elsewhere', 'application/x-www-form-urlencoded', 'a=1')],
            'a session save handler of the script\'s own' => [ParityRequest::get('/session-handler.php')],
            'session across two requests' => [
                ParityRequest::get('/dump.php?visit=1'),
                ParityRequest::get('/dump.php?visit=2', 'Cookie: PHPSESSID={session}; other=1'),
            ],
        ];
    }
}
