<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

use Kiln\Tests\Support\RawClient;

/** Sends one ParityRequest on a fresh connection and reads the whole response. */
final class ParityClient
{
    /**
     * @return array{status: int, headers: array<string, list<string>>, body: string, sent_at: float, received_at: float}
     */
    public static function send(ParityServer $server, ParityRequest $request, ?string $sessionId): array
    {
        $sentAt = microtime(true);
        $client = new RawClient($server->host, $server->port);
        try {
            $client->send($request->bytes($server->port, $sessionId));
            $response = $client->readResponse(10.0, $request->method === 'HEAD');
        } catch (\RuntimeException $e) {
            throw new \RuntimeException("{$server->name}: {$request->describe()}: {$e->getMessage()}\n" . $server->diagnostics(), 0, $e);
        } finally {
            $client->close();
        }
        if ($response === null) {
            throw new \RuntimeException("{$server->name} closed the connection without answering {$request->describe()}\n" . $server->diagnostics());
        }
        return ['status' => $response['status'], 'headers' => $response['headers'], 'body' => $response['body'],
            'sent_at' => $sentAt, 'received_at' => microtime(true)];
    }

    /**
     * The session id a response issued (its `Set-Cookie: PHPSESSID=...`), if any.
     *
     * @param array{headers: array<string, list<string>>} $response
     */
    public static function issuedSession(array $response): ?string
    {
        foreach ($response['headers']['set-cookie'] ?? [] as $cookie) {
            if (preg_match('~^PHPSESSID=([^;]+)~', $cookie, $m) === 1) {
                return $m[1];
            }
        }
        return null;
    }
}
