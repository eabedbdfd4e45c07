<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Internal;

use Kiln\Db\Mysql\Event\Ready;
use Kiln\Db\Mysql\MysqlProtocolException;

/**
 * The login: reads the server's greeting (Protocol::HandshakeV10), answers it (HandshakeResponse41) with
 * the proof of the plugin the server named, and follows an auth switch or caching_sha2_password's extra
 * round (fast path: a cached proof was enough; full: the password itself, sent only over a secure
 * channel — TLS or a unix socket — never in clear over TCP).
 *
 * @internal
 */
final class Handshake
{
    public const CLIENT_LONG_PASSWORD = 0x1;
    public const CLIENT_FOUND_ROWS = 0x2;
    public const CLIENT_LONG_FLAG = 0x4;
    public const CLIENT_CONNECT_WITH_DB = 0x8;
    public const CLIENT_PROTOCOL_41 = 0x200;
    public const CLIENT_TRANSACTIONS = 0x2000;
    public const CLIENT_SECURE_CONNECTION = 0x8000;
    public const CLIENT_MULTI_STATEMENTS = 0x10000;
    public const CLIENT_MULTI_RESULTS = 0x20000;
    public const CLIENT_PS_MULTI_RESULTS = 0x40000;
    public const CLIENT_PLUGIN_AUTH = 0x80000;
    public const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x200000;
    /** utf8mb4_general_ci */
    public const CHARSET = 45;

    private string $nonce = '';
    private string $serverVersion = '';
    private int $connectionId = 0;

    public function __construct(
        private readonly string $user,
        #[\SensitiveParameter]
        private readonly string $password,
        private readonly string $database,
        private readonly bool $secure,
    ) {}

    /** The answer to the greeting. */
    public function respond(string $greeting): string
    {
        $in = new Reader($greeting);
        $version = $in->int1();
        if ($version !== 10) {
            throw new MysqlProtocolException("Handshake protocol version $version is not supported (10 is)");
        }
        $this->serverVersion = $in->nulString();
        $this->connectionId = $in->int4();
        $nonce = $in->bytes(8);
        $in->skip(1);
        $capabilities = $in->int2();
        $in->skip(3); // character set, status flags
        $capabilities |= $in->int2() << 16;
        $nonceLength = $in->int1();
        $in->skip(10);
        if (($capabilities & self::CLIENT_PROTOCOL_41) === 0 || ($capabilities & self::CLIENT_SECURE_CONNECTION) === 0) {
            throw new MysqlProtocolException('The server does not speak protocol 4.1 with secure authentication');
        }
        $nonce .= $in->bytes(max(13, $nonceLength - 8));
        $this->nonce = rtrim($nonce, "\0");
        $plugin = ($capabilities & self::CLIENT_PLUGIN_AUTH) !== 0 ? $in->nulString() : 'mysql_native_password';
        $flags = self::CLIENT_LONG_PASSWORD | self::CLIENT_FOUND_ROWS | self::CLIENT_LONG_FLAG | self::CLIENT_PROTOCOL_41
            | self::CLIENT_TRANSACTIONS | self::CLIENT_SECURE_CONNECTION | self::CLIENT_MULTI_STATEMENTS
            | self::CLIENT_MULTI_RESULTS | self::CLIENT_PS_MULTI_RESULTS | self::CLIENT_PLUGIN_AUTH
            | self::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | ($this->database === '' ? 0 : self::CLIENT_CONNECT_WITH_DB);
        if ($plugin !== 'mysql_native_password' && $plugin !== 'caching_sha2_password') {
            $plugin = 'mysql_native_password'; // the server then switches us to what it wants
        }

        return pack('VV', $flags, Wire::MAX_PAYLOAD) . \chr(self::CHARSET) . str_repeat("\0", 23)
            . $this->user . "\0"
            . Wire::lenencString($this->proof($plugin))
            . ($this->database === '' ? '' : $this->database . "\0")
            . $plugin . "\0";
    }

    /** The reply to a packet during the login other than OK and ERR, or null when none is due. */
    public function continue(string $payload): ?string
    {
        $first = \ord($payload[0]);
        if ($first === 0xFE) { // AuthSwitchRequest
            $in = new Reader($payload);
            $in->skip(1);
            $plugin = $in->nulString();
            $this->nonce = rtrim($in->rest(), "\0");

            return $this->proof($plugin);
        }
        if ($first === 0x01 && ($payload[1] ?? '') === "\x03") {
            return null; // caching_sha2_password: fast authentication worked, OK follows
        }
        if ($first === 0x01 && ($payload[1] ?? '') === "\x04") {
            if (!$this->secure) {
                throw new MysqlProtocolException('The server wants the password itself (caching_sha2_password full authentication): connect over a unix socket or TLS, or log in once with a client that can, so that the server caches the proof');
            }

            return $this->password . "\0";
        }
        throw new MysqlProtocolException(\sprintf('Unexpected packet 0x%02X during authentication', $first));
    }

    public function ready(): Ready
    {
        return new Ready($this->serverVersion, $this->connectionId);
    }

    private function proof(string $plugin): string
    {
        return match ($plugin) {
            'mysql_native_password' => Scramble::native($this->password, $this->nonce),
            'caching_sha2_password' => Scramble::sha256($this->password, $this->nonce),
            'mysql_clear_password' => $this->secure
                ? $this->password . "\0"
                : throw new MysqlProtocolException('The server asks for the password in clear (mysql_clear_password): Kiln sends it only over a unix socket or TLS'),
            default => throw new MysqlProtocolException("The authentication plugin '$plugin' is not supported (mysql_native_password and caching_sha2_password are)"),
        };
    }
}
