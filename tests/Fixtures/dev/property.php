<?php
require_once __DIR__ . '/lib/registry.php';
DevFixtureRegistry::$visits++;
echo 'property';
