// Stylesheets imported by the dashboard are bundled by Bun.build into a CSS file of their own.
declare module "*.css";
