<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Server\RelayLink;
use Kiln\Store\Internal\GatewayClient;

/**
 * Publishing from a classic PHP script, the same call in every tier:
 *
 *     \Kiln\Store\Publish::to('comments', json_encode($comment));
 *
 * - coroutine and sequential tiers (the script runs in the worker): NodeBus::get()->publish().
 * - isolated (php-cgi) and fork tiers (the script runs in a process of its own): through the worker's
 *   BusGateway, whose socket and token the worker passes as the KILN_BUS_SOCKET and KILN_BUS_TOKEN
 *   meta-variables; the call returns once the worker published. Under php-cgi, Kiln's classes are not
 *   loaded: `require_once` Kiln's autoloader first (`src/bootstrap.php` of the Kiln install, or your own
 *   Composer autoloader when Kiln is a dependency); on the other tiers the same line does nothing.
 *
 * docs/node-bus.md has the whole story; tests/Fixtures/bus/public/ the same script on each tier.
 *
 * Every subscriber on every worker of the node gets the message once, after this returns, in the order the
 * script published. It throws BusException when the message was not published (nothing is dropped silently).
 */
final class Publish
{
    public const SOCKET = 'KILN_BUS_SOCKET';
    public const TOKEN = 'KILN_BUS_TOKEN';

    private static ?GatewayClient $client = null;

    private static int $clientPid = 0;

    private static string $clientSocket = '';

    /** @throws BusException when the message was not published */
    public static function to(string $channel, string $payload): void
    {
        $socket = self::param(self::SOCKET);
        if (RelayLink::current() !== null || $socket === null) {
            NodeBus::get()->publish($channel, $payload);
            return;
        }
        if ($socket === '') {
            throw new BusException("The worker of this script could not open its bus socket (see the server's log): "
                . "a message to '$channel' was not published");
        }
        if (self::$client === null || self::$clientPid !== getmypid() || self::$clientSocket !== $socket) {
            self::$client = GatewayClient::connect($socket, self::param(self::TOKEN) ?? '');
            self::$clientPid = (int) getmypid();
            self::$clientSocket = $socket;
        }
        try {
            self::$client->publish($channel, $payload);
        } catch (BusException $e) {
            self::$client->close();
            self::$client = null;
            throw $e;
        }
    }

    /** From the meta-variables the worker set ($_SERVER), else the environment; null when neither has it. */
    private static function param(string $name): ?string
    {
        $value = $_SERVER[$name] ?? getenv($name);
        return \is_string($value) ? $value : null;
    }
}
