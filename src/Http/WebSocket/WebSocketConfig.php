<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket;

/**
 * Settings of a worker's WebSocket connections that are not limits (those are in Http\Limits, `ws*`):
 * whether permessage-deflate is offered (`--ws-deflate`) and which origins may connect (`--ws-origins`).
 */
final readonly class WebSocketConfig
{
    /** @var list<string> */
    public array $origins;

    /**
     * @param list<string> $origins `scheme://host[:port]` of the pages allowed to connect; empty: any origin
     *        (and clients that send none, which are not browsers)
     */
    public function __construct(
        public bool $deflate = false,
        array $origins = [],
    ) {
        $clean = [];
        foreach ($origins as $origin) {
            $origin = rtrim(strtolower(trim($origin)), '/');
            if (preg_match('~^[a-z][a-z0-9+.-]*://[^/?#\s]+$~', $origin) !== 1) {
                throw new \ValueError("A WebSocket origin is scheme://host[:port] (https://example.com), got '$origin'");
            }
            $clean[] = $origin;
        }
        $this->origins = $clean;
    }
}
