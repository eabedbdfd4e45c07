<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Loop\Loop;
use Kiln\Server\RelayLink;

/**
 * The node bus, as code in a worker finds it: a RelayBus reaching every worker of the node when this
 * process is a `kiln serve` worker (the worker connects it at boot, before the app is built), otherwise a
 * process-local InProcessBus (a unit test, a script run on its own, a process forked from a worker).
 *
 * Like NodeState, this is per-process state: set() replaces the bus (a Redis one, a test double) for
 * everything that asks later. Scripts of the isolated and fork tiers run in other processes: they publish
 * with Publish::to(), through the worker's BusGateway (see scriptParams()).
 */
final class NodeBus
{
    private static ?Bus $bus = null;

    /** The process the bus was made for: a process forked since gets its own. */
    private static int $pid = 0;

    /** False: it could not start in this process. */
    private static BusGateway|false|null $gateway = null;

    public static function get(): Bus
    {
        if (self::$bus === null || self::$pid !== getmypid()) {
            self::$pid = (int) getmypid();
            self::$gateway = null;
            $link = RelayLink::current();
            self::$bus = $link !== null ? new RelayBus($link) : new InProcessBus();
        }
        return self::$bus;
    }

    public static function set(?Bus $bus): void
    {
        if (self::$gateway instanceof BusGateway) {
            self::$gateway->close(); // it publishes on the bus replaced
        }
        self::$gateway = null;
        self::$bus = $bus;
        self::$pid = (int) getmypid();
    }

    /**
     * Whether get() reaches the other workers of a node (false: it is this process's own bus). In a worker a
     * bus set() over the relay (the App's NumberingBus, which passes messages on to it) still does.
     */
    public static function spansNode(): bool
    {
        $bus = self::get();
        return $bus instanceof RelayBus || (RelayLink::current() !== null && !$bus instanceof InProcessBus);
    }

    /**
     * The CGI meta-variables that let a script of another process (a php-cgi child, a forked child) publish
     * on this worker's bus with Publish::to(): the gateway's socket and its token. The gateway starts on the
     * first call (the loop must exist). Only the worker sets these names: request headers arrive as HTTP_*.
     * Both empty when the gateway cannot start (reported once to the loop's error handler): such a script's
     * Publish::to() then throws BusException rather than publish on a bus of its own process.
     *
     * @return array<string, string>
     */
    public static function scriptParams(): array
    {
        $bus = self::get();
        if (self::$gateway === null) {
            try {
                self::$gateway = BusGateway::start($bus);
            } catch (BusException $e) {
                self::$gateway = false;
                Loop::reportError($e);
            }
        }
        if (self::$gateway === false) {
            return [Publish::SOCKET => '', Publish::TOKEN => ''];
        }
        return [Publish::SOCKET => self::$gateway->socket, Publish::TOKEN => self::$gateway->token];
    }
}
