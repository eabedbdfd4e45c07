<?php

declare(strict_types=1);

// bench/www-site served as `kiln serve bench/www-site --tier=sequential` serves it (.htaccess on, the worker
// in the document root), for bench/micro/hotpath.php:
//   php bench/micro/hotpath.php bench/apps/site.php 40000 /hello.php

use Kiln\Site\DocumentRoot;
use Kiln\Site\SiteConfig;

$site = DocumentRoot::forSite(__DIR__ . '/../www-site/public', SiteConfig::create(tier: getenv('KILN_BENCH_TIER') ?: 'sequential'));
chdir($site->root());
return $site;
