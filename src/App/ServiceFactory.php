<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Http\AccessLog;
use Kiln\Http\HttpServer;
use Kiln\Http\Limits;
use Kiln\Http\StaticFiles;
use Kiln\Server\LogFile;
use Kiln\Server\Service;

/** Builds what a worker serves, inside the worker (so every worker generation loads the code afresh). */
final class ServiceFactory
{
    public const KIND_SCRIPT = 'script';
    public const KIND_DOCROOT = 'docroot';

    public static function create(string $path, string $kind, Limits $limits, ?LogFile $accessLog): Service
    {
        $handler = match ($kind) {
            self::KIND_SCRIPT => App::load($path),
            self::KIND_DOCROOT => new StaticFiles($path),
            default => throw new \ValueError("Unknown target kind '$kind'"),
        };
        return new HttpServer($handler, $limits, $accessLog === null ? null : new AccessLog($accessLog));
    }
}
