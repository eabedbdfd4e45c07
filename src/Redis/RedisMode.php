<?php

declare(strict_types=1);

namespace Kiln\Redis;

/** How the client finds its server: one address, a master named by Sentinels, or a Cluster's nodes. */
enum RedisMode
{
    case Single;
    case Sentinel;
    case Cluster;
}
